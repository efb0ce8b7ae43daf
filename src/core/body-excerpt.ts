import { setUnrefTimeout } from './timers.js'

/** Characters of a response body an error message quotes at most. */
export const EXCERPT_CHARS = 300

/**
 * The start of a response body as one line of text, read within `ms`: the reason a server gives
 * for refusing a request, for error messages. It never waits past the deadline (a body that
 * trickles or never ends is cut off there), reads no more than it quotes, and drops control
 * characters, so a hostile server cannot write escape sequences into a terminal or a log.
 * `undefined` when there is no body or nothing arrived in time.
 */
export async function bodyExcerpt(response: Response, ms: number): Promise<string | undefined> {
  const reader = response.body?.getReader()
  if (!reader) return undefined
  const decoder = new TextDecoder()
  let text = ''
  // Cancelling ends a pending read with `done`, so the loop below stops at the deadline.
  const deadline = setUnrefTimeout(() => void reader.cancel().catch(() => undefined), ms)
  try {
    while (text.length < EXCERPT_CHARS) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
  } catch {
    // A body that fails half way still says what it said so far.
  } finally {
    clearTimeout(deadline)
    void reader.cancel().catch(() => undefined)
  }
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim()
  if (line === '') return undefined
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS)}...` : line
}
