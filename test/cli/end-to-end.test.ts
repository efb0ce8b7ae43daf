import { afterEach, describe, expect, it } from 'vitest'
import { generateStandardSecret } from '../../src/webhook/index.js'
import { plainEnv, runCli, startDev, startListen, type CliProcess } from '../helpers/cli.js'

const running: CliProcess[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => cli.stop()))
})

describe('eventwire listen + dev + send, as three processes', () => {
  it('carries a call from the shell to the receiver, signed and verified', async () => {
    const listen = await startListen(['--secret', 's3cret'])
    running.push(listen.cli)
    const dev = await startDev(['--webhook', `${listen.url}/hooks`, '--secret', 's3cret'])
    running.push(dev.cli)

    const env = plainEnv({ EVENTWIRE_ENDPOINT: dev.url, EVENTWIRE_WRITE_KEY: dev.writeKey })
    const sent = await runCli(
      ['send', 'track', '--user', 'u1', '--event', 'Signed Up', '--prop', 'plan=pro', '--json'],
      env,
    )
    expect(sent.code).toBe(0)
    const { messageId } = JSON.parse(sent.stdout) as { messageId: string }

    const arrived = await listen.cli.waitForRecord((record) => record['event'] === 'request')
    expect(arrived).toMatchObject({
      signature: 'verified',
      status: 200,
      path: '/hooks',
      webhookId: messageId,
      payload: { version: 1, type: 'track', userId: 'u1', event: 'Signed Up', properties: { plan: 'pro' } },
    })
    expect(await dev.cli.waitForRecord((record) => record['event'] === 'delivered')).toMatchObject({
      eventId: messageId,
    })

    running.splice(0)
    expect(await dev.cli.stop()).toBe(0)
    expect(await listen.cli.stop()).toBe(0)
    expect(dev.cli.records().at(-1)).toMatchObject({ event: 'stopped', received: 1, delivered: 1, failed: 0 })
    expect(listen.cli.records().at(-1)).toMatchObject({ event: 'stopped', verified: 1, forged: 0 })
  })

  it('carries a call signed with Standard Webhooks (--signature standard) to a listen that verifies it', async () => {
    const secret = generateStandardSecret()
    const listen = await startListen(['--secret', secret])
    running.push(listen.cli)
    const dev = await startDev(['--webhook', `${listen.url}/hooks`, '--secret', secret, '--signature', 'standard'])
    running.push(dev.cli)
    const env = plainEnv({ EVENTWIRE_ENDPOINT: dev.url, EVENTWIRE_WRITE_KEY: dev.writeKey })
    expect((await runCli(['send', 'identify', '--user', 'u1', '--json'], env)).code).toBe(0)
    expect(await listen.cli.waitForRecord((record) => record['event'] === 'request')).toMatchObject({
      signature: 'verified',
      status: 200,
      payload: { type: 'identify', userId: 'u1' },
    })
    // The same delivery checked as X-Signature has none: refused as unsigned.
    const strict = await startListen(['--secret', secret, '--signature', 'x-signature'])
    running.push(strict.cli)
    const other = await startDev(['--webhook', strict.url, '--secret', secret, '--signature', 'standard'])
    running.push(other.cli)
    const otherEnv = plainEnv({ EVENTWIRE_ENDPOINT: other.url, EVENTWIRE_WRITE_KEY: other.writeKey })
    expect((await runCli(['send', 'identify', '--user', 'u2', '--json'], otherEnv)).code).toBe(0)
    expect(await strict.cli.waitForRecord((record) => record['event'] === 'request')).toMatchObject({
      signature: 'missing',
      status: 401,
    })
  })

  it('makes up a Standard Webhooks secret when none is given, and prints it for receivers', async () => {
    const listen = await startListen()
    running.push(listen.cli)
    const dev = await startDev(['--webhook', listen.url, '--signature', 'standard'])
    running.push(dev.cli)
    const listening = dev.cli.records().find((record) => record['event'] === 'listening')
    expect(listening?.['generatedSecret']).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const env = plainEnv({ EVENTWIRE_ENDPOINT: dev.url, EVENTWIRE_WRITE_KEY: dev.writeKey })
    expect((await runCli(['send', 'identify', '--user', 'u1', '--json'], env)).code).toBe(0)
    const arrived = await listen.cli.waitForRecord((record) => record['event'] === 'request')
    expect(arrived).toMatchObject({ signature: 'unchecked', status: 200 })
  })

  it('refuses --signature standard with a secret that is not a whsec_ one, in dev and in listen', async () => {
    const dev = await runCli([
      'dev',
      '--port',
      '0',
      '--webhook',
      'http://127.0.0.1:9/',
      '--secret',
      's3cret',
      '--signature',
      'standard',
    ])
    expect(dev.code).not.toBe(0)
    expect(dev.stderr).toMatch(/whsec_/)
    const listen = await runCli(['listen', '--port', '0', '--secret', 's3cret', '--signature', 'standard'])
    expect(listen.code).toBe(2)
    expect(listen.stderr).toMatch(/whsec_/)
    // A whsec_ secret that is not one: said at start (exit 2), not by resetting every request.
    for (const secret of ['whsec_abc', `whsec_${btoa('x'.repeat(23))}`]) {
      const invalid = await runCli(['listen', '--port', '0', '--secret', secret])
      expect(invalid.code).toBe(2)
      expect(invalid.stderr).toMatch(/--secret: /)
    }
  })
})
