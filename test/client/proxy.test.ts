import { afterEach, describe, expect, it } from 'vitest'
import { Client, type DeliveryError } from '../../src/index.js'
import { WebClient } from '../helpers/builds.js'
import { type ProxyBehaviour, startConnectProxy } from '../helpers/connect-proxy.js'
import { startSink } from '../helpers/sink.js'

const opened: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((server) => server.close()))
})

async function started<T extends { close(): Promise<void> }>(server: Promise<T>): Promise<T> {
  const ready = await server
  opened.push(ready)
  return ready
}

/** One message through a Node client with `proxy`; what the client settled with. */
async function sendThrough(endpoint: string, proxy: string) {
  const errors: DeliveryError[] = []
  const client = new Client('key', { endpoint, proxy, flushAt: 1, retry: { limit: 1, baseDelay: 1, maxDelay: 1 } })
  client.on('error', (error) => errors.push(error))
  let sent = 0
  client.on('sent', () => sent++)
  client.track({ userId: 'u1', event: 'Through' })
  await client.close()
  return { sent, errors }
}

describe('the proxy option of a Client on Node', () => {
  it('sends every batch through the proxy’s CONNECT tunnel to the endpoint', async () => {
    const sink = await started(startSink())
    const proxy = await started(startConnectProxy({ kind: 'tunnel', password: 'pw' }))
    const { port } = new URL(proxy.url)
    const { sent, errors } = await sendThrough(sink.url, `http://user:pw@127.0.0.1:${port}`)
    expect({ sent, errors }).toEqual({ sent: 1, errors: [] })
    expect(sink.delivered().map((message) => message['event'])).toEqual(['Through'])
    expect(proxy.connects).toEqual([
      { authority: `127.0.0.1:${new URL(sink.url).port}`, authorization: `Basic ${btoa('user:pw')}` },
    ])
  })

  it.each<[string, ProxyBehaviour, RegExp]>([
    ['asks for credentials', { kind: 'refuse', status: 407 }, /with 407 Nope: it wants credentials/],
    ['refuses the target', { kind: 'refuse', status: 403 }, /with 403 Nope: it does not allow this target/],
  ])(
    'a proxy that %s: the batch fails after its retries, its error naming the proxy',
    async (_name, behaviour, said) => {
      const sink = await started(startSink())
      const proxy = await started(startConnectProxy(behaviour))
      const { sent, errors } = await sendThrough(sink.url, proxy.url)
      expect(sent).toBe(0)
      expect(errors.map((error) => error.code)).toEqual(['ERR_RETRIES_EXHAUSTED'])
      expect(String((errors[0]?.cause as Error | undefined)?.message)).toMatch(said)
      expect(String((errors[0]?.cause as Error | undefined)?.message)).toContain(`the proxy ${proxy.url}`)
      expect(sink.requests).toHaveLength(0)
    },
  )

  it('is refused at once where it cannot be honoured, or is not a proxy URL', () => {
    expect(() => new Client('key', { proxy: 'socks5://proxy:1080' })).toThrow(/Invalid option `proxy`/)
    expect(() => new Client('key', { proxy: 8080 as never })).toThrow(/proxy URL/)
    // A fetch of the user's sends instead of the client.
    expect(() => new Client('key', { proxy: 'http://proxy:3128', fetch: globalThis.fetch })).toThrow(
      /give the proxy to your fetch/,
    )
    // Deno and Bun: their fetch reads the proxy variables itself.
    expect(() => new WebClient('key', { proxy: 'http://proxy:3128' })).toThrow(/HTTPS_PROXY/)
  })
})
