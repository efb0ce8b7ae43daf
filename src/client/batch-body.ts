import type { Gzip } from '../core/gzip.js'
import type { Batch } from './batch.js'
import type { PageLifecycle } from './page-exit.js'
import type { BatchBody } from './transport.js'

/** How batch bodies are compressed: with `gzip`, from `from` bytes of JSON. */
export interface Compression {
  readonly gzip: Gzip
  readonly from: number
}

/**
 * The body of a batch: its JSON, or, with `compression` and from its `from` bytes, a promise of
 * its gzip bytes, made once (every attempt resends them). Never rejects: a compression that
 * throws, rejects or does not shrink the body leaves the JSON (`onError` hears why it failed).
 * Nothing waits for a compression past close()'s `deadline` (the send then ends at once) or as
 * the page is left (the JSON goes at once, see {@link PageLifecycle.whileCompressing}).
 */
export function batchBody(
  batch: Batch,
  compression: Compression | undefined,
  deadline: AbortSignal,
  page: PageLifecycle,
  onError: (error: unknown) => void,
): string | Promise<BatchBody> {
  if (compression === undefined || batch.bytes < compression.from || page.left) return batch.body
  const { gzip } = compression
  return new Promise((resolve) => {
    const asJson = () => resolve(batch.body)
    deadline.addEventListener('abort', asJson)
    const uncut = page.whileCompressing(asJson)
    // A Gzip that throws at once rejects here, as one that fails later does.
    void new Promise<Uint8Array<ArrayBuffer>>((compressed) => compressed(gzip(batch.body)))
      .then(
        (bytes) => resolve(bytes.byteLength < batch.bytes ? bytes : batch.body),
        (error: unknown) => {
          onError(error)
          asJson()
        },
      )
      // Whatever the error was (describing it may throw too), the JSON goes.
      .catch(asJson)
      .finally(() => {
        deadline.removeEventListener('abort', asJson)
        uncut()
      })
  })
}
