import { createKyTransport } from '../ky-transport.js'
import type { TransportFactory } from '../transport.js'
import { createUndiciTransport } from '../undici-transport.js'

/**
 * How the `Client` sends on Node (`#eventwire/client-transport` under the "node" condition, see
 * package.json "imports"): undici's `Pool` over keep-alive connections, unless the user gave a
 * `fetch` to send with; then ky over that fetch, as on every other runtime.
 */
export const defaultTransport: TransportFactory = (settings) =>
  settings.fetch ? createKyTransport(settings) : createUndiciTransport(settings)
