export { readDebugSetting as debugSetting } from '../../core/debug.js'
import { OptionsError } from '../../core/errors/options-error.js'
import { webGzip } from '../../core/gzip.js'
import { createKyTransport } from '../ky-transport.js'
import type { WatchExit } from '../process-exit.js'
import type { TransportFactory } from '../transport.js'
export { OTHER_CLIENTS_NAMES as otherNames } from '../other-clients-names.js'

/**
 * How the `Client` sends in Deno, Bun and Workers (`#eventwire/client-transport`, see package.json
 * "imports"; browsers have `browser.ts`): ky over `fetch`. A `proxy` is refused rather than left
 * unused: the runtime's `fetch` has its own way.
 */
export const defaultTransport: TransportFactory = (settings) => {
  if (settings.proxy !== undefined)
    throw new OptionsError(
      'proxy',
      "only Node's transport sends through a proxy. Deno's and Bun's fetch read HTTPS_PROXY and NO_PROXY themselves: set those instead.",
    )
  return createKyTransport(settings)
}

/** How the `Client` compresses in Deno, Bun and Workers: `CompressionStream`, where there is one. */
export const gzip = webGzip

/** Deno, Bun and Workers: a process that ends is not something a module can watch on every one of them, and a Worker has none. */
export const watchExit: WatchExit | undefined = undefined
