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
 * The first `maxBytes` of a response body, read within `ms`, after which the body is cancelled
 * (and the connection under it let go). A body that stalls, trickles or never ends is cut off at
 * the deadline or the cap, and one that fails half way gives what came before, so the caller
 * never waits longer, nor holds more, than it asked. Never rejects.
 *
 * It listens to `signal` itself rather than trusting the fetch to pass an abort on to the body:
 * the signal a fetch was given may be a combined one that no longer forwards aborts once
 * collected.
 */
export async function readBodyStart(response: Response, limits: BodyReadLimits): Promise<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array>
  try {
    const body = response.body
    if (!body) return new Uint8Array(0)
    reader = body.getReader()
  } catch {
    // Already read or locked: nothing left to read.
    return new Uint8Array(0)
  }
  const chunks: Uint8Array[] = []
  let total = 0
  // Cancelling ends a pending read with `done`, so the loop below stops at once.
  const stop = () => void reader.cancel().catch(() => undefined)
  const deadline = setUnrefTimeout(stop, Math.max(0, limits.ms))
  limits.signal?.addEventListener('abort', stop)
  if (limits.signal?.aborted) stop()
  try {
    while (total < limits.maxBytes) {
      const { done, value } = await reader.read()
      if (done) break
      const part = value.subarray(0, limits.maxBytes - total)
      chunks.push(part)
      total += part.byteLength
    }
  } catch {
    // A body that fails half way still gives what it gave so far.
  } finally {
    clearTimeout(deadline)
    limits.signal?.removeEventListener('abort', stop)
    stop()
  }
  const bytes = new Uint8Array(total)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}
