import { afterEach, describe, expect, it } from 'vitest'
import { isPrivateAddress } from '../../src/core/private-address.js'
import { OptionsError, WebhookDestination } from '../../src/webhook/index.js'
import { WebhookDestination as FetchBuildDestination } from '../../src/webhook/index.js'
import { startSink, type Sink } from '../helpers/sink.js'

let sink: Sink | undefined
afterEach(async () => {
  await sink?.close()
  sink = undefined
})

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    '[::1]',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
  ])('%s is not public', (address) => {
    expect(isPrivateAddress(address)).toBe(true)
  })

  it.each([
    '8.8.8.8',
    '172.32.0.1',
    '192.169.0.1',
    '100.128.0.1',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    'example.com',
    '1.2.3',
  ])('%s is public or not an address', (address) => {
    expect(isPrivateAddress(address)).toBe(false)
  })
})

describe('blockPrivateNetworks (SSRF guard, off by default)', () => {
  it.each([
    ['the Node build', (url: string) => new WebhookDestination({ webhooks: [{ url }], blockPrivateNetworks: true })],
    [
      'the fetch build',
      (url: string) => new FetchBuildDestination({ webhooks: [{ url }], blockPrivateNetworks: true }),
    ],
  ])('refuses literal private addresses at construction in %s', (_name, build) => {
    const mapped = [
      'http://[::ffff:127.0.0.1]:8080/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:10.0.0.1]/',
      'http://[::ffff:7f00:1]/',
    ]
    for (const url of [
      'http://127.0.0.1:8080/in',
      'https://10.0.0.5/hook',
      'http://[::1]:9000/',
      'http://169.254.169.254/latest/meta-data',
      ...mapped,
    ]) {
      expect(() => build(url)).toThrow(OptionsError)
    }
    expect(() => build('https://hooks.example.com/in')).not.toThrow()
  })

  it('refuses a host name that resolves to a private address, after resolution, without connecting (Node build)', async () => {
    sink = await startSink()
    const port = new URL(sink.url).port
    const destination = new WebhookDestination({
      webhooks: [{ url: `http://localhost:${port}/in` }],
      blockPrivateNetworks: true,
    })
    const result = await destination.deliver({ type: 'identify', userId: 'u1' })
    await destination.close()
    expect(result.status).toBe('failed')
    expect(result.urls[0]).toMatchObject({ status: 'failed', attempts: 1 })
    expect(result.urls[0]?.lastError?.code).toBe('ERR_BLOCKED_TARGET')
    expect(sink.requests).toHaveLength(0)
  })

  it('delivers to the same host when the guard is off (the default)', async () => {
    sink = await startSink()
    const port = new URL(sink.url).port
    const destination = new WebhookDestination({ webhooks: [{ url: `http://localhost:${port}/in` }] })
    const result = await destination.deliver({ type: 'identify', userId: 'u1' })
    await destination.close()
    expect(result.status).toBe('delivered')
    expect(sink.requests).toHaveLength(1)
  })

  it('rejects a non-boolean setting', () => {
    expect(
      () => new WebhookDestination({ webhooks: [{ url: 'https://x.test/' }], blockPrivateNetworks: 'yes' as never }),
    ).toThrow(OptionsError)
  })
})
