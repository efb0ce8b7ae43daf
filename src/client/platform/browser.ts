import { createFetchTransport } from '../fetch-transport.js'
import type { TransportFactory } from '../transport.js'

/**
 * How the `Client` sends in browsers (`#eventwire/client-transport` under the `browser` condition,
 * see package.json "imports"): `fetch` itself, without ky, to keep pages' downloads small.
 */
export const defaultTransport: TransportFactory = createFetchTransport
