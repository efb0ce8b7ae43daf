import { webGzip } from '../../core/gzip.js'
import { createKyTransport } from '../ky-transport.js'
import type { WatchExit } from '../process-exit.js'
import type { TransportFactory } from '../transport.js'
export { OTHER_CLIENTS_NAMES as otherNames } from '../other-clients-names.js'

/**
 * How the `Client` sends everywhere but Node (`#eventwire/client-transport` in browsers, Deno, Bun and
 * Workers, see package.json "imports"): ky over `fetch`.
 */
export const defaultTransport: TransportFactory = createKyTransport

/** How the `Client` compresses in Deno, Bun and Workers: `CompressionStream`, where there is one. */
export const gzip = webGzip

/** Deno, Bun and Workers: a process that ends is not something a module can watch on every one of them, and a Worker has none. */
export const watchExit: WatchExit | undefined = undefined
