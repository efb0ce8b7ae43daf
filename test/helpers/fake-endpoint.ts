import { resolveClientOptions, type ClientOptions } from '../../src/client/options.js'
import { createKyTransport } from '../../src/client/ky-transport.js'
import type { SendResult } from '../../src/client/transport.js'
import { senderOver } from './transport-sender.js'

/**
 * The client's transport (attempt timeout 10 s) over a fetch that `respond` answers, with no
 * network. Each request is recorded with the time it went out at: under fake timers, the waits
 * between them are read exactly, without real delays.
 */
export function fakeEndpoint(
  respond: (index: number, body: string) => Response | Promise<Response>,
  retry: ClientOptions['retry'] = {},
) {
  const requests: Array<{ body: string; at: number }> = []
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const body = await new Request(input, init).text()
    const index = requests.push({ body, at: Date.now() }) - 1
    return respond(index, body)
  }
  const { retry: resolved } = resolveClientOptions('key', { retry: { baseDelay: 1_000, maxDelay: 60_000, ...retry } })
  const transport = createKyTransport({
    batchUrl: 'https://ingest.test/v1/batch',
    writeKey: 'key',
    writeKeyIn: 'header',
    timeout: 10_000,
    fetch,
    proxy: undefined,
    maxConcurrentRequests: 1,
  })
  const sender = senderOver(transport, resolved)
  const send = (body: string): Promise<SendResult> => sender(body)
  /** Fake milliseconds between the n-th request with `body` and the one before it. */
  const gaps = (body: string) => {
    const times = requests.filter((request) => request.body === body).map((request) => request.at)
    return times.slice(1).map((at, index) => at - (times[index] ?? 0))
  }
  return { requests, send, gaps }
}

/** A response with an empty JSON body. */
export const answer = (status: number, headers: Record<string, string> = {}) => new Response('{}', { status, headers })
