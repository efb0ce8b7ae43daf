import { createKyTransport } from '../ky-transport.js'
import type { TransportFactory } from '../transport.js'

/**
 * How the `Client` sends everywhere but Node (`#eventwire/client-transport` in browsers, Deno, Bun and
 * Workers, see package.json "imports"): ky over `fetch`.
 */
export const defaultTransport: TransportFactory = createKyTransport
