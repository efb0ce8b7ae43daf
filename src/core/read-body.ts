import { setUnrefTimeout } from './timers.js'

/** How much of a response body {@link readBodyStart} reads, and for how long. */
export interface BodyReadLimits {
  /** Bytes read at most; the rest is never read. */
  readonly maxBytes: number
  /** Longest wait in ms, from the call. */
  readonly ms: number
  /** Stops the read as soon as it aborts. */
  readonly signal?: AbortSignal | undefined
}

/**
 * The first `maxBytes` of a response body, as the chunks it came in, read within `ms`, after which the body is cancelled
 * (and the connection under it let go). A body that stalls, trickles or never ends is cut off at
 * the deadline or the cap, and one that fails half way gives what came before, so the caller
 * never waits longer, nor holds more, than it asked. Never rejects.
 *
 * It listens to `signal` itself rather than trusting the fetch to pass an abort on to the body:
 * the signal a fetch was given may be a combined one that no longer forwards aborts once
 * collected.
 */
export async function readBodyStart(
  response: Response,
  { maxBytes, ms, signal }: BodyReadLimits,
): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = []
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  // Cancelling ends a pending read with `done`, so the loop below stops at once.
  const stop = () => void reader?.cancel().catch(() => undefined)
  const deadline = setUnrefTimeout(stop, ms)
  signal?.addEventListener('abort', stop)
  try {
    // Throws for a body already read or locked: nothing left to read then.
    reader = response.body?.getReader()
    if (signal?.aborted) stop()
    for (let total = 0; reader && total < maxBytes; ) {
      const { done, value } = await reader.read()
      if (done) break
      chunks.push(value.subarray(0, maxBytes - total))
      total += value.byteLength
    }
  } catch {
    // A body that fails half way still gives what it gave so far.
  } finally {
    clearTimeout(deadline)
    signal?.removeEventListener('abort', stop)
    stop()
  }
  return chunks
}
