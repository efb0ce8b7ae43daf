import { webGzip } from '../../core/gzip.js'
import { createKyTransport } from '../ky-transport.js'
import type { TransportFactory } from '../transport.js'

/**
 * How the `Client` sends everywhere but Node (`#eventwire/client-transport` in browsers, Deno, Bun and
 * Workers, see package.json "imports"): ky over `fetch`.
 */
export const defaultTransport: TransportFactory = createKyTransport

/** How the `Client` compresses in Deno, Bun and Workers: `CompressionStream`, where there is one. */
export const gzip = webGzip
