import { afterEach, describe, expect, it, vi } from 'vitest'
import { Client, type ClientOptions } from '../../src/index.js'
import { WebClient } from '../helpers/builds.js'
import { startSink, type Sink } from '../helpers/sink.js'

let sink: Sink | undefined
afterEach(async () => {
  await sink?.close()
  sink = undefined
})

describe('which transport a Client sends with', () => {
  /** Sends one message with a fresh client; returns its debug lines and the headers the sink got. */
  async function sendOne(Client: typeof WebClient, options: ClientOptions = {}) {
    sink = await startSink()
    const lines: string[] = []
    const logger = { log: (line: string) => lines.push(line), error: (line: string) => lines.push(line) }
    const client = new Client('key', { endpoint: sink.url, verbose: true, logger, ...options })
    client.track({ userId: 'u1', event: 'E' })
    await client.close()
    expect(sink.delivered()).toHaveLength(1)
    return { lines, headers: sink.requests[0]?.headers ?? {} }
  }

  it("on Node: the HTTP/1.1 stack of its own (fetch's own headers, such as sec-fetch-mode, are absent)", async () => {
    const { lines, headers } = await sendOne(Client)
    expect(lines[0]).toBe(`sending to ${sink?.url}/v1/batch with http1`)
    expect(headers['sec-fetch-mode']).toBeUndefined()
  })

  it('on Node given a fetch: ky over that fetch', async () => {
    let calls = 0
    const fetch: typeof globalThis.fetch = (input, init) => {
      calls++
      return globalThis.fetch(input, init)
    }
    const { lines, headers } = await sendOne(Client, { fetch })
    expect(lines[0]).toMatch(/ with fetch$/)
    expect(calls).toBe(1)
    expect(headers['sec-fetch-mode']).toBe('cors')
  })

  it('elsewhere: ky over the global fetch', async () => {
    const { lines, headers } = await sendOne(WebClient)
    expect(lines[0]).toMatch(/ with fetch$/)
    expect(headers['sec-fetch-mode']).toBe('cors')
  })

  it('close() lets go of its connections', async () => {
    await sendOne(Client)
    // Left open, the idle connection would last until a keep-alive timeout (4 s or more).
    await vi.waitFor(() => expect(sink?.connections()).toEqual({ opened: 1, closed: 1 }), { timeout: 2_000 })
  })
})
