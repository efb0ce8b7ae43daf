import { readBodyStart } from './read-body.js'

/** Characters of a response body an error message quotes at most. */
export const EXCERPT_CHARS = 300

/** UTF-8 takes at most 4 bytes for a character that is 2 UTF-16 code units: this many bytes always hold EXCERPT_CHARS. */
export const EXCERPT_BYTES = EXCERPT_CHARS * 4

/**
 * The start of a response body as one line of text, read within `ms` (see {@link readBodyStart}):
 * the reason a server gives for refusing a request, for error messages. It never waits past the
 * deadline or an abort of `signal`, reads no more than it quotes, and drops control characters,
 * so a hostile server cannot write escape sequences into a terminal or a log. `undefined` when
 * there is no body or nothing arrived in time.
 */
export async function bodyExcerpt(response: Response, ms: number, signal?: AbortSignal): Promise<string | undefined> {
  return excerptOf(await readBodyStart(response, { maxBytes: EXCERPT_BYTES, ms, signal }))
}

/**
 * The first bytes of a body (at most {@link EXCERPT_BYTES} of them are read), as {@link bodyExcerpt}
 * quotes them: for a transport that reads bodies its own way.
 */
export function excerptOf(chunks: readonly Uint8Array[]): string | undefined {
  const decoder = new TextDecoder()
  let text = ''
  let bytes = 0
  // `stream: true` leaves out a character the byte cap cut in half instead of writing U+FFFD.
  for (const chunk of chunks) {
    if (bytes >= EXCERPT_BYTES) break
    text += decoder.decode(chunk.subarray(0, EXCERPT_BYTES - bytes), { stream: true })
    bytes += chunk.byteLength
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is dropped.
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim()
  if (line === '') return undefined
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS)}...` : line
}
