import { fetchAttempt } from './fetch-attempt.js'
import type { BatchTransport, TransportSettings } from './transport.js'

/**
 * The client's transport in browsers: `fetch` itself (the global one, or the `fetch` option, which
 * gets one `Request`, as ky hands it on the other runtimes), one attempt per call
 * ({@link fetchAttempt}). It does what the ky transport does without ky, whose retries, hooks and
 * option merging the client does not use and which would be some 4 KB of every page's download.
 */
export function createFetchTransport(settings: TransportSettings): BatchTransport {
  const { batchUrl: url, fetch: given } = settings
  return {
    name: 'fetch',
    attempt: fetchAttempt(settings, (init) => (given ? given(new Request(url, init)) : fetch(url, init))),
  }
}
