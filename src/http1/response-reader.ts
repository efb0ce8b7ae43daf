import { RESPONSE_BODY_CAP } from '../core/limits.js'

/** Most bytes a response's head (status line and headers) may take: Node's and undici's default. */
export const MAX_HEAD_BYTES = 16 * 1024

/** Most characters of a kept refusal's reason phrase (`statusText`). */
export const MAX_REASON_CHARS = 100

/** Most bytes of a chunk-size line or of a line of a chunked body's trailers, its line end apart. */
const MAX_LINE_BYTES = 4 * 1024

/** The code of the error a response that breaks HTTP/1.1's framing ends its attempt with. */
export const HTTP_PROTOCOL_CODE = 'ERR_EVENTWIRE_HTTP_PROTOCOL'

/** A response that is not HTTP/1.1 as RFC 9112 frames it: the attempt fails as a network failure. */
export function protocolError(what: string): Error {
  return Object.assign(new Error(`the receiver's response is not valid HTTP/1.1: ${what}`), {
    code: HTTP_PROTOCOL_CODE,
  })
}

/**
 * `text` a peer sent, fit to quote in an error or a log line: each control character (a
 * terminal's escape sequences) as a space.
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')
}

/** A chunk-size or trailer line over {@link MAX_LINE_BYTES}. */
function lineTooLong(): Error {
  return protocolError(`a line of its chunked body is over ${MAX_LINE_BYTES} bytes`)
}

/**
 * What a response's head says: its status, and what the connection may do after its body. It is
 * the attempt's answer as it stands (`ok`: an answer arrived), with nothing copied.
 */
export interface ResponseHead {
  readonly ok: true
  readonly status: number
  /**
   * The reason phrase, kept only by a reader that keeps refusals (see `keepRefusal`), control
   * characters as spaces, at most {@link MAX_REASON_CHARS}; `''` otherwise.
   */
  readonly statusText: string
  /** `Retry-After` as sent; `null` when absent or sent twice (then it says nothing usable). */
  readonly retryAfter: string | null
  /** The receiver lets the connection carry another request after this response. */
  readonly keepAlive: boolean
  /** The receiver's `Keep-Alive: timeout=N`, in ms; `undefined` without one. */
  readonly idleMs: number | undefined
  /** A refusal's header fields, name and value, as sent; only from a reader that keeps refusals. */
  readonly fields: readonly (readonly [string, string])[] | undefined
  /** The start of a refusal's body, as it arrives (de-chunked); only from a reader that keeps refusals. */
  readonly body: Uint8Array[] | undefined
}

/** What the connection does next, after a chunk is read. */
export type ReadOutcome = 'more' | 'complete' | 'over-cap'

enum Phase {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkEnd,
  Trailers,
  UntilClose,
  Done,
}

const CR = 13
const LF = 10

/**
 * Reads one HTTP/1.1 response from a connection's chunks: the head, then the body framed by
 * `Content-Length`, chunked transfer coding or the connection's end (RFC 9112 section 6.3). The
 * body is counted and dropped (but for the start of a refusal a reader was asked to keep); past
 * {@link RESPONSE_BODY_CAP} bytes the connection is closed instead of read further. Interim (1xx)
 * heads are skipped. Only the few header fields that decide the answer and the framing are looked
 * at, unless a refusal is kept.
 */
export class ResponseReader {
  #phase = Phase.Head
  /** Bytes of a head or line split across chunks, kept until its end arrives. */
  #held: Buffer | undefined = undefined
  /** Bytes left of the body (`Content-Length`) or of the current chunk. */
  #remaining = 0
  #bodyBytes = 0
  /** The CR of the CRLF that ends a chunk's data was read. */
  #chunkCrSeen = false
  #trailerBytes = 0
  #reusable = true
  /** Bytes of a refusal's body to keep; 0: none, and no fields either. */
  readonly #keep: number
  /** Bytes of the body kept so far. */
  #kept = 0
  /** The final (non-1xx) head, once read. */
  head: ResponseHead | undefined = undefined

  /**
   * @param keepRefusal - for an answer that is not 2xx, keep its reason phrase, its header fields
   *   and up to this many bytes of its body (an error can show them); the rest of such a body is
   *   not read. 0 keeps nothing: only the fields that decide the answer and the framing are read.
   */
  constructor(keepRefusal = 0) {
    this.#keep = keepRefusal
  }

  /**
   * Whether the connection may carry another request once this response is complete: only after
   * a 2xx the receiver keeps alive. A receiver that refuses a request and then writes a stray 200
   * on the connection (a broken proxy, a handler that answers twice) would have that 200 read as
   * the next request's answer, and an event it refused reported delivered. A new connection after
   * a refusal costs a handshake on the failing path only. The final head is never 1xx.
   */
  get reusable(): boolean {
    return this.#reusable && this.head?.keepAlive === true && this.head.status < 300
  }

  /** Reads the next chunk of the connection. Throws {@link protocolError} on a malformed response. */
  read(chunk: Buffer): ReadOutcome {
    let at = 0
    while (at < chunk.length) {
      switch (this.#phase) {
        case Phase.Head: {
          at = this.#readHead(chunk, at)
          // A kept refusal's start is read all the same: the body's reading stops where it is kept.
          if ((this.#phase as Phase) === Phase.Length && this.#remaining > RESPONSE_BODY_CAP && !this.#keeping)
            return 'over-cap'
          break
        }
        case Phase.Length: {
          const taken = Math.min(this.#remaining, chunk.length - at)
          if (this.#keepFrom(chunk, at, taken)) return 'over-cap'
          at += taken
          this.#remaining -= taken
          if (this.#remaining === 0) this.#phase = Phase.Done
          break
        }
        case Phase.UntilClose: {
          if (this.#keepFrom(chunk, at, chunk.length - at)) return 'over-cap'
          this.#bodyBytes += chunk.length - at
          at = chunk.length
          if (this.#bodyBytes > RESPONSE_BODY_CAP) return 'over-cap'
          break
        }
        case Phase.ChunkSize:
          at = this.#readChunkSize(chunk, at)
          // A chunk that would take the body past the cap is not waited for.
          if (
            (this.#phase as Phase) === Phase.ChunkData &&
            this.#bodyBytes + this.#remaining > RESPONSE_BODY_CAP &&
            !this.#keeping
          )
            return 'over-cap'
          break
        case Phase.ChunkData: {
          const taken = Math.min(this.#remaining, chunk.length - at)
          if (this.#keepFrom(chunk, at, taken)) return 'over-cap'
          at += taken
          this.#remaining -= taken
          this.#bodyBytes += taken
          if (this.#bodyBytes > RESPONSE_BODY_CAP) return 'over-cap'
          if (this.#remaining === 0) this.#phase = Phase.ChunkEnd
          break
        }
        case Phase.ChunkEnd: {
          // CRLF, or a bare LF, which RFC 9112 lets a recipient take as a line's end.
          const byte = chunk[at++]
          if (byte === CR && !this.#chunkCrSeen) this.#chunkCrSeen = true
          else if (byte === LF) {
            this.#chunkCrSeen = false
            this.#phase = Phase.ChunkSize
          } else throw protocolError('a chunk does not end with CRLF')
          break
        }
        case Phase.Trailers:
          at = this.#readTrailers(chunk, at)
          break
        case Phase.Done:
          // Bytes after the response: nothing was asked for them. The connection is not reused.
          this.#reusable = false
          return 'complete'
      }
    }
    return this.#phase === Phase.Done ? 'complete' : 'more'
  }

  /** The connection ended: whether that completes the response (a body that runs to the end). */
  ended(): boolean {
    if (this.#phase === Phase.UntilClose) this.#phase = Phase.Done
    return this.#phase === Phase.Done
  }

  /** Whether the start of this response's body is kept (a refusal, by a reader asked to keep one). */
  get #keeping(): boolean {
    return this.head?.body !== undefined
  }

  /**
   * Keeps `length` body bytes of `chunk` from `at`, up to what a kept refusal may hold: whether it
   * holds all it may now (the rest of the body is not read).
   */
  #keepFrom(chunk: Buffer, at: number, length: number): boolean {
    const body = this.head?.body
    if (body === undefined) return false
    const taken = Math.min(length, this.#keep - this.#kept)
    // A copy: the chunk may be a slice of a larger buffer the socket reuses.
    if (taken > 0) body.push(Uint8Array.prototype.slice.call(chunk, at, at + taken))
    this.#kept += taken
    return this.#kept >= this.#keep
  }

  /** Joins `chunk` from `at` to the bytes held from earlier chunks. */
  #joined(chunk: Buffer, at: number): Buffer {
    const rest = at === 0 ? chunk : chunk.subarray(at)
    return this.#held === undefined ? rest : Buffer.concat([this.#held, rest])
  }

  #readHead(chunk: Buffer, at: number): number {
    // A NUL cannot begin a status line; it begins the frame an HTTP/2 server sends first. Said at
    // once, where the head would otherwise wait for a line end that never comes.
    if (this.#held === undefined && chunk[at] === 0)
      throw protocolError('it answered in HTTP/2, and eventwire sends HTTP/1.1: have the receiver accept HTTP/1.1 too')
    const bytes = this.#joined(chunk, at)
    const heldBefore = bytes.length - (chunk.length - at)
    const end = headEnd(bytes)
    if (end === undefined) {
      // Up to 3 bytes of the CRLF CRLF that ends the head may be here already, not counted: the
      // head is held to its limit as it would be read whole.
      if (bytes.length - lineEndBytes(bytes, 3) > MAX_HEAD_BYTES)
        throw protocolError(`its head is over ${MAX_HEAD_BYTES} bytes`)
      this.#held = Buffer.from(bytes)
      return chunk.length
    }
    if (end.text > MAX_HEAD_BYTES) throw protocolError(`its head is over ${MAX_HEAD_BYTES} bytes`)
    this.#held = undefined
    this.#takeHead(bytes.toString('latin1', 0, end.text))
    return at + end.next - heldBefore
  }

  #takeHead(text: string): void {
    const lineEnd = text.indexOf('\n')
    const statusLine = lineEnd < 0 ? text : text.slice(0, withoutCr(text.charCodeAt(lineEnd - 1), lineEnd))
    const match = /^HTTP\/1\.([01]) (\d\d\d)(?: |$)/.exec(statusLine)
    if (match === null) throw protocolError(`the status line is ${JSON.stringify(statusLine.slice(0, 40))}`)
    const status = Number(match[2])
    // HTTP has no status outside 100-599: 600 or 000 is not an answer to trust, final or not.
    if (status < 100 || status > 599) throw protocolError(`status ${match[2]} is outside 100-599`)
    // 1xx: an interim answer (100 Continue, 103 Early Hints); the final one follows. 101 would
    // switch protocols, which no webhook request asks for.
    if (status === 101) throw protocolError('101 Switching Protocols was not asked for')
    if (status < 200) return
    // Only a refusal is kept, and only by a reader asked to: a 2xx needs nothing of it.
    const keep = this.#keep > 0 && status >= 300
    const fields = new HeadFields(keep)
    if (lineEnd >= 0) readFields(fields, text, lineEnd + 1)
    const http10 = match[1] === '0'
    this.head = {
      ok: true,
      status,
      // After "HTTP/1.1 404 ": the status line's fixed start. Errors and logs quote it: a
      // terminal's escape sequences go, and a reason as long as a head does not come whole.
      statusText: keep ? printable(statusLine.slice(13, 13 + MAX_REASON_CHARS)) : '',
      retryAfter: fields.retryAfter,
      keepAlive: !fields.close && (!http10 || fields.keepAliveToken),
      idleMs: fields.idleMs,
      fields: fields.all,
      body: keep ? [] : undefined,
    }
    // Content-Length beside Transfer-Encoding: a request smuggling shape; never reused, whatever the
    // status frames (RFC 9112 section 6.3), and read as chunked where there is a body.
    if (fields.transferEncoding && fields.length !== undefined) this.#reusable = false
    if (status === 204 || status === 304) this.#phase = Phase.Done
    else if (fields.chunked) this.#phase = Phase.ChunkSize
    else if (fields.transferEncoding || fields.length === undefined) {
      this.#phase = Phase.UntilClose
      this.#reusable = false
    } else {
      this.#remaining = fields.length
      this.#phase = fields.length === 0 ? Phase.Done : Phase.Length
    }
  }

  /** Reads a line ending in CRLF (or LF) from `chunk` at `at`; `undefined` while its end has not arrived. */
  #line(chunk: Buffer, at: number): { line: string; next: number } | undefined {
    const bytes = this.#joined(chunk, at)
    const heldBefore = bytes.length - (chunk.length - at)
    const end = bytes.indexOf(LF)
    // The same limit on a line however it arrives, whole in one read or held across several: the
    // verdict never hangs on how the network split the response. Its CR may be held before its LF.
    if (end < 0) {
      if (bytes.length - lineEndBytes(bytes, 1) > MAX_LINE_BYTES) throw lineTooLong()
      this.#held = Buffer.from(bytes)
      return undefined
    }
    this.#held = undefined
    const lineEnd = withoutCr(bytes[end - 1], end)
    if (lineEnd > MAX_LINE_BYTES) throw lineTooLong()
    const line = bytes.toString('latin1', 0, lineEnd)
    return { line, next: at + end + 1 - heldBefore }
  }

  #readChunkSize(chunk: Buffer, at: number): number {
    const read = this.#line(chunk, at)
    if (read === undefined) return chunk.length
    // Leading zeros do not count. Past 13 significant digits a size is not exact in JavaScript, and
    // far past any cap: it ends the read as over the cap all the same. Past 16 it would overflow
    // 64 bits, where llhttp refuses it too.
    const size = /^0*([0-9A-Fa-f]{1,16})[\t ]*(?:;.*)?$/.exec(read.line)
    if (size === null) throw protocolError(`a chunk size is ${JSON.stringify(read.line.slice(0, 40))}`)
    this.#remaining = Number.parseInt(size[1] as string, 16)
    this.#phase = this.#remaining === 0 ? Phase.Trailers : Phase.ChunkData
    return read.next
  }

  #readTrailers(chunk: Buffer, at: number): number {
    const read = this.#line(chunk, at)
    if (read === undefined) return chunk.length
    this.#trailerBytes += read.line.length + 2
    if (this.#trailerBytes > MAX_HEAD_BYTES) throw protocolError(`its trailers are over ${MAX_HEAD_BYTES} bytes`)
    if (read.line === '') this.#phase = Phase.Done
    return read.next
  }
}

/**
 * Where the head in `bytes` ends: `text`, the end of its last line (before its CRLF), and `next`,
 * the first byte after the empty line that ends it; `undefined` while that line has not arrived.
 * Lines may end in a bare LF, which RFC 9112 lets a recipient take as a line's end.
 */
export function headEnd(bytes: Buffer): { text: number; next: number } | undefined {
  for (let lf = bytes.indexOf(LF); lf >= 0; lf = bytes.indexOf(LF, lf + 1)) {
    const after = bytes[lf + 1] === CR ? lf + 2 : lf + 1
    if (bytes[after] === LF) return { text: withoutCr(bytes[lf - 1], lf), next: after + 1 }
  }
  return undefined
}

/** How many of the last bytes of `bytes`, at most `most`, are CR or LF: the start of a line end. */
function lineEndBytes(bytes: Buffer, most: number): number {
  let count = 0
  while (count < most && count < bytes.length) {
    const byte = bytes[bytes.length - 1 - count]
    if (byte !== CR && byte !== LF) break
    count++
  }
  return count
}

/** The end of a line whose LF is at `lf`, before the CR that may precede it (`before`, the code there). */
function withoutCr(before: number | undefined, lf: number): number {
  return before === CR ? lf - 1 : lf
}

/** The header fields of a head that matter here. */
class HeadFields {
  /** Every field, name and value, when the head is kept. */
  readonly all: [string, string][] | undefined
  retryAfter: string | null = null
  retryAfterSeen = false
  length: number | undefined = undefined
  transferEncoding = false
  chunked = false
  close = false
  keepAliveToken = false
  idleMs: number | undefined = undefined

  constructor(keepAll: boolean) {
    this.all = keepAll ? [] : undefined
  }
}

/** Reads the header fields of a head from `start` (after the status line) into `fields`. */
function readFields(fields: HeadFields, text: string, start: number): void {
  let at = start
  while (at < text.length) {
    let next = text.indexOf('\n', at)
    if (next < 0) next = text.length
    const end = withoutCr(text.charCodeAt(next - 1), next)
    const colon = text.indexOf(':', at)
    const first = text.charCodeAt(at)
    const beforeColon = text.charCodeAt(colon - 1)
    // Obsolete line folding (a line that starts with a space or tab), a line without a name, and
    // whitespace before the colon: RFC 9112 section 5.1 forbids it, and "Transfer-Encoding : chunked"
    // read as some other field would frame the body by what remains.
    if (
      first === 32 ||
      first === 9 ||
      colon < 0 ||
      colon > end ||
      colon === at ||
      beforeColon === 32 ||
      beforeColon === 9
    )
      throw protocolError(`a header line is ${JSON.stringify(text.slice(at, Math.min(end, at + 40)))}`)
    const value = text.slice(colon + 1, end).trim()
    fields.all?.push([text.slice(at, colon), value])
    readField(fields, text, at, colon, value)
    at = next + 1
  }
}

function readField(fields: HeadFields, text: string, at: number, colon: number, value: string): void {
  // Only names of the lengths that matter are lowercased and compared.
  switch (colon - at) {
    case 14:
      if (text.slice(at, colon).toLowerCase() !== 'content-length') return
      if (!/^\d{1,15}$/.test(value)) throw protocolError(`Content-Length is ${JSON.stringify(value.slice(0, 40))}`)
      if (fields.length !== undefined && fields.length !== Number(value))
        throw protocolError('it has two different Content-Length values')
      fields.length = Number(value)
      return
    case 17: {
      if (text.slice(at, colon).toLowerCase() !== 'transfer-encoding') return
      fields.transferEncoding = true
      const codings = value.toLowerCase().split(',')
      // Chunked only as the final coding frames the body; anything else runs to the connection's end.
      fields.chunked = codings[codings.length - 1]?.trim() === 'chunked'
      return
    }
    case 10: {
      const name = text.slice(at, colon).toLowerCase()
      if (name === 'connection') {
        for (const token of value.toLowerCase().split(',')) {
          const option = token.trim()
          if (option === 'close') fields.close = true
          else if (option === 'keep-alive') fields.keepAliveToken = true
        }
      } else if (name === 'keep-alive') {
        const timeout = /(?:^|[,\s])timeout\s*=\s*(\d{1,6})/i.exec(value)
        if (timeout !== null) fields.idleMs = Number(timeout[1]) * 1000
      }
      return
    }
    case 11:
      if (text.slice(at, colon).toLowerCase() !== 'retry-after') return
      fields.retryAfter = fields.retryAfterSeen ? null : value
      fields.retryAfterSeen = true
      return
  }
}
