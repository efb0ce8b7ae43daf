/** Compresses a batch body: resolves to the gzip bytes of its UTF-8. */
export type Gzip = (text: string) => Promise<Uint8Array<ArrayBuffer>>

/**
 * gzip with the Web's `CompressionStream` (browsers, Deno, Bun, Workers), or `undefined` on a
 * runtime without it: batches then go uncompressed.
 */
export const webGzip: Gzip | undefined =
  typeof CompressionStream === 'function'
    ? (text) =>
        new Response(new Blob([text]).stream().pipeThrough(new CompressionStream('gzip')))
          .arrayBuffer()
          .then((buffer) => new Uint8Array(buffer))
    : undefined
