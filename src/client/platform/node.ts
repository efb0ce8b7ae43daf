import { gzip as zlibGzip } from 'node:zlib'
import type { Gzip } from '../../core/gzip.js'
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
