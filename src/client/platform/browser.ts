import { readStoredDebugSetting } from '../../core/debug.js'
import { webGzip } from '../../core/gzip.js'
import { createFetchTransport } from '../fetch-transport.js'
import type { WatchExit } from '../process-exit.js'
import type { TransportFactory } from '../transport.js'

/**
 * How the `Client` sends in browsers (`#eventwire/client-transport` under the `browser` condition,
 * see package.json "imports"): `fetch` itself, without ky, to keep pages' downloads small.
 */
export const defaultTransport: TransportFactory = createFetchTransport

/** How the `Client` compresses in browsers: `CompressionStream`, where there is one. */
export const gzip = webGzip

/** Browsers: the page is what ends, and the page lifecycle sends or keeps what is queued (`flushOnPageHide`). */
export const watchExit: WatchExit | undefined = undefined

/** Browsers: other clients' names for our options are server libraries' names; the bundle leaves them out. */
export const otherNames = undefined

/** A page keeps the setting in `localStorage.debug`. */
export const debugSetting = readStoredDebugSetting
