export { readDebugSetting as debugSetting } from '../../core/debug.js'
import { webGzip } from '../../core/gzip.js'
import { createKyTransport } from '../ky-transport.js'
import type { WatchExit } from '../process-exit.js'
import type { TransportFactory } from '../transport.js'
export { OTHER_CLIENTS_NAMES as otherNames } from '../other-clients-names.js'

/**
 * How the `Client` sends in Deno, Bun and Workers (`#eventwire/client-transport`, see package.json
 * "imports"; browsers have `browser.ts`): ky over `fetch`.
 */
export const defaultTransport: TransportFactory = createKyTransport

/** How the `Client` compresses in Deno, Bun and Workers: `CompressionStream`, where there is one. */
export const gzip = webGzip

/** Deno, Bun and Workers: a process that ends is not something a module can watch on every one of them, and a Worker has none. */
export const watchExit: WatchExit | undefined = undefined
