import type { ClientOptions } from './options.js'
import { ClientBase } from './client-base.js'
import { createKyTransport } from './ky-transport.js'
import type { TransportFactory } from './transport.js'
import { createUndiciTransport } from './undici-transport.js'

/** undici's `Pool`, unless the user gave a `fetch` to send with: then ky over that fetch, as elsewhere. */
const nodeTransport: TransportFactory = (settings) =>
  settings.fetch ? createKyTransport(settings) : createUndiciTransport(settings)

/**
 * Records identify, track, page, screen, group and alias calls, queues them in memory and sends
 * them in batches to `POST {endpoint}/v1/batch` in the background, with the Go analytics client's
 * semantics: a flush at `flushAt` messages or `flushAfter` ms, retries with backoff, and
 * `DEBUG=analytics` logging.
 *
 * Each call validates and serializes its message at once (throwing a typed error for bad input,
 * with nothing queued) and returns `false` when the queue is over its high-water mark: wait for `'drain'`
 * (or `await client.whenDrained()`) before producing more.
 *
 * This is the Node build: it sends with undici's `Pool` over keep-alive connections, or with the
 * `fetch` option when one is given (through ky, as every other runtime does).
 *
 * @example
 * ```ts
 * import { Client } from 'eventwire'
 *
 * const client = new Client('WRITE_KEY', { endpoint: 'https://ingest.example.com' })
 * client.on('error', (error) => console.error(error.code, error.messages.length))
 * client.identify({ userId: 'u1', traits: { plan: 'pro' } })
 * client.track({ userId: 'u1', event: 'Signed Up', properties: { source: 'ad' } })
 * await client.close()
 * ```
 */
export class Client extends ClientBase {
  /**
   * @param writeKey - The write key of your source.
   * @throws {@link OptionsError} for a missing write key or an option it cannot use.
   */
  constructor(writeKey: string, options: ClientOptions = {}) {
    super(writeKey, options, nodeTransport)
  }
}
