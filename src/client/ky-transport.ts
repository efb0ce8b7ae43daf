import ky from 'ky'
import { fetchAttempt } from './fetch-attempt.js'
import type { BatchTransport, TransportSettings } from './transport.js'

/**
 * What ky is handed for a `fetch` of the user's that resolved `undefined` or `null`, which ky would
 * throw a TypeError over (reading `ok`): no `Response` either, so {@link fetchAttempt} still calls
 * the attempt invalid rather than a network error.
 */
const NOTHING = Object.freeze({}) as Response

/**
 * The client's transport over `fetch` (the global one, or the `fetch` option), with ky making each
 * request: the transport of Deno, Bun and Workers, and of Node when `fetch` is given. One attempt
 * per call ({@link fetchAttempt}, shared with the browsers' transport): ky builds the request and
 * calls the `fetch`; its retries, timeout and HTTP errors are off, since the client's retry loop,
 * the attempt's deadline and the status rules are the same on every runtime.
 */
export function createKyTransport(settings: TransportSettings): BatchTransport {
  const given = settings.fetch
  const api = ky.create({
    timeout: false,
    throwHttpErrors: false,
    retry: 0,
    ...(given ? { fetch: async (input, init) => (await given(input, init)) ?? NOTHING } : {}),
  })
  return { name: 'fetch', attempt: fetchAttempt(settings, (init) => api(settings.batchUrl, init)) }
}
