import { gzip as zlibGzip } from 'node:zlib'
import type { Gzip } from '../../core/gzip.js'
import { OptionsError } from '../../core/errors/options-error.js'
import type { Logger } from '../../core/debug.js'
export { readDebugSetting as debugSetting } from '../../core/debug.js'
import { lostAtExitLine, type HoldsMessages, type WatchExit } from '../process-exit.js'
import { createHttp1Transport } from '../http1-transport.js'
import { createKyTransport } from '../ky-transport.js'
import type { TransportFactory } from '../transport.js'
export { OTHER_CLIENTS_NAMES as otherNames } from '../other-clients-names.js'

/**
 * How the `Client` sends on Node (`#eventwire/client-transport` under the "node" condition, see
 * package.json "imports"): the HTTP/1.1 stack the webhook engine sends with, over keep-alive
 * connections (through the `proxy` option's proxy, if any), unless the user gave a `fetch` to
 * send with; then ky over that fetch, as on every other runtime.
 */
export const defaultTransport: TransportFactory = (settings) => {
  if (settings.fetch === undefined) return createHttp1Transport(settings)
  if (settings.proxy !== undefined)
    throw new OptionsError(
      'proxy',
      'the fetch option sends instead of the client: give the proxy to your fetch, or leave fetch out.',
    )
  return createKyTransport(settings)
}

/**
 * How the `Client` compresses on Node: zlib on libuv's thread pool, off the event loop, at level 1
 * (about 9/10 of level 6's saving on analytics JSON for half its CPU; see README "Compressed
 * batches"). Node's `CompressionStream` wraps the same zlib in Web streams, at two to four times
 * the CPU per batch.
 */
export const gzip: Gzip = (text) =>
  new Promise((resolve, reject) => {
    zlibGzip(text, { level: 1 }, (error, result) =>
      error ? reject(error) : resolve(result as Uint8Array<ArrayBuffer>),
    )
  })

/** The clients to report on at exit, held weakly, each with its logger; one `'exit'` listener for them all. */
const watched = new Set<{ readonly client: WeakRef<HoldsMessages>; readonly logger: Logger }>()
let listening = false

/**
 * How the `Client` learns that a Node process ends: a script that forgets `close()` exits with its
 * messages still queued (timers never keep a process alive), and the client says so, once.
 */
export const watchExit: WatchExit = (client, logger) => {
  if (!listening) {
    listening = true
    process.once('exit', reportAll)
  }
  const entry = { client: new WeakRef(client), logger }
  watched.add(entry)
  forgotten.register(client, entry)
}

const forgotten = new FinalizationRegistry<{ readonly client: WeakRef<HoldsMessages>; readonly logger: Logger }>(
  (entry) => watched.delete(entry),
)

function reportAll(): void {
  for (const { client, logger } of watched) {
    const held = client.deref()?.pending ?? 0
    if (held > 0) logger.error(lostAtExitLine(held))
  }
  watched.clear()
}
