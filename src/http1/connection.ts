import type { Socket } from 'node:net'
import type { Carrier, Http1Attempt } from './attempt.js'
import { protocolError, ResponseReader } from './response-reader.js'

/** What a connection tells its pool. */
export interface ConnectionOwner {
  /** The connection is free for another request. */
  release(connection: Http1Connection): void
  /** The connection is gone. */
  remove(connection: Http1Connection): void
  /** `attempt` was sent on a kept-alive connection the receiver had closed: send it on a new one. */
  resend(attempt: Http1Attempt): void
}

/** A byte no header value may hold: it would end the line, or the head, early. */
const LINE_BREAK = /[\r\n\0]/
/** Anything outside ASCII in a head: its bytes are Latin-1 there, and UTF-8 in the body. */
// Stryker disable next-line Regex: equivalent: the Buffer path writes the same bytes for an ASCII head; the string is the fast path.
const NON_ASCII = /[^\0-\x7f]/

/**
 * The bytes of one request: the head and the body, as one string when the head is ASCII and the
 * body a string (one socket write, no buffer to allocate). Throws when a header value would split
 * the head.
 */
export function requestBytes(attempt: Http1Attempt, host: string): string | Buffer {
  const { path, headers, body } = attempt.request
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
  let head = `POST ${path} HTTP/1.1\r\nhost: ${host}\r\ncontent-length: ${length}\r\n`
  for (const name in headers) {
    const value = headers[name] as string
    if (LINE_BREAK.test(value)) throw new TypeError(`the ${name} header's value holds a line break or NUL`)
    head += `${name}: ${value}\r\n`
  }
  head += '\r\n'
  if (typeof body !== 'string') return Buffer.concat([Buffer.from(head, 'latin1'), body])
  return NON_ASCII.test(head) ? Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body)]) : head + body
}

/** How long a kept-alive connection may wait idle when the receiver does not say: undici's default. */
export const DEFAULT_IDLE_MS = 4_000

/**
 * One keep-alive connection to a receiver: it carries one attempt at a time, writes its request
 * in one write and reads the response with a {@link ResponseReader}. The receiver closing it while
 * idle takes it out of its pool; closing it under a request sent on it after an idle wait, before
 * any byte of an answer, sends that request once more on a new connection (the receiver never
 * read it, or at most once more, which at-least-once delivery allows).
 */
export class Http1Connection implements Carrier {
  /** The socket, once there is one: a tunnel through a proxy gives it later. */
  #socket: Socket | undefined = undefined
  /** A request written before the socket came, to write once it does. */
  #unwritten: string | Buffer | undefined = undefined
  /** Aborts the making of the socket (a tunnel being opened). */
  #abortSetup: (() => void) | undefined = undefined
  /** Who it tells when it is done with or gone: the URL's pool while in use, the origin while idle. */
  owner: ConnectionOwner
  readonly #host: string
  #attempt: Http1Attempt | undefined = undefined
  #reader = new ResponseReader()
  #carried = 0
  /** A byte of an answer to the current request arrived. */
  // Stryker disable next-line BooleanLiteral: equivalent: start() sets it before any byte can be read.
  #heard = false
  #gone = false
  /** When it last became idle, on the monotonic clock, and how long it may stay so. */
  #idleSince = 0
  idleMs = DEFAULT_IDLE_MS

  /** `socket`: the connection's socket, or `undefined` until {@link attach} gives it. */
  constructor(socket: Socket | undefined, owner: ConnectionOwner, host: string) {
    this.owner = owner
    this.#host = host
    if (socket !== undefined) this.attach(socket)
  }

  /** Its socket, made: a request already started is written now. */
  attach(socket: Socket): void {
    this.#abortSetup = undefined
    if (this.#gone) {
      socket.destroy()
      return
    }
    this.#socket = socket
    socket.on('data', (chunk: Buffer) => this.#read(chunk))
    socket.on('end', () => this.#ended())
    socket.on('error', (error) => this.#lost(error))
    socket.on('close', () => this.#closed())
    const unwritten = this.#unwritten
    this.#unwritten = undefined
    if (unwritten !== undefined) socket.write(unwritten)
  }

  /** Its socket is being made (a tunnel opened): `abort` stops that, should it be destroyed first. */
  settingUp(abort: () => void): void {
    this.#abortSetup = abort
  }

  /** Its socket could not be made (the proxy's failure): the attempt fails with `cause`, and it is gone. */
  setupFailed(cause: Error): void {
    this.#abortSetup = undefined
    this.#lost(cause)
    this.#closed()
  }

  /** Whether it is still connected (not destroyed, nor closed by the receiver). */
  get usable(): boolean {
    return !this.#gone
  }

  /** Whether an answered attempt is still reading its body here. */
  get readingBody(): boolean {
    return this.#attempt?.answered === true
  }

  /** Sends `attempt` on this connection. */
  start(attempt: Http1Attempt): void {
    let bytes: string | Buffer
    try {
      bytes = requestBytes(attempt, this.#host)
    } catch (error) {
      attempt.fail(error)
      attempt.end()
      this.owner.release(this)
      return
    }
    this.#attempt = attempt
    this.#heard = false
    attempt.carrier = this
    // Nothing of an answer may arrive before the request: a new reader per request.
    this.#reader = new ResponseReader(attempt.request.keepRefusal)
    this.#carried++
    if (this.#socket === undefined) {
      this.#unwritten = bytes
      return
    }
    this.#socket.ref()
    this.#socket.write(bytes)
  }

  drop(): void {
    this.#attempt = undefined
    this.destroy()
  }

  destroy(): void {
    this.#gone = true
    if (this.#socket !== undefined) {
      this.#socket.destroy()
      return
    }
    // No socket yet, so no 'close' will come: it is gone from its owner now.
    const abort = this.#abortSetup
    this.#abortSetup = undefined
    if (abort === undefined) return
    abort()
    this.owner.remove(this)
  }

  /** How much longer it may stay idle, in ms: none left at 0 or below. */
  idleLeft(now: number): number {
    return this.#idleSince + this.idleMs - now
  }

  /** Keeps it open without keeping the process alive while it waits idle. */
  idle(now: number): void {
    this.#idleSince = now
    this.#socket?.unref()
  }

  #read(chunk: Buffer): void {
    const attempt = this.#attempt
    // Bytes no request asked for: the connection cannot be trusted with another one.
    if (attempt === undefined) {
      this.destroy()
      return
    }
    this.#heard = true
    let outcome: ReturnType<ResponseReader['read']>
    try {
      outcome = this.#reader.read(chunk)
    } catch (error) {
      // A head that arrived whole decides, whatever broke after it in the same chunk.
      this.#answer(attempt)
      this.#lost(error)
      return
    }
    this.#answer(attempt)
    if (outcome === 'complete') this.#complete(this.#reader.reusable)
    // Answered already: the rest of a body this long is not worth reading.
    else if (outcome === 'over-cap') this.#complete(false)
  }

  #answer(attempt: Http1Attempt): void {
    const head = this.#reader.head
    if (head !== undefined && !attempt.answered) attempt.answerHead(head)
  }

  #complete(reusable: boolean): void {
    const attempt = this.#attempt as Http1Attempt
    this.#attempt = undefined
    attempt.end()
    if (!reusable) {
      this.destroy()
      return
    }
    const idleMs = this.#reader.head?.idleMs
    // A second short of what the receiver said, as undici does: it may close the connection at its word.
    if (idleMs !== undefined) this.idleMs = Math.max(0, Math.min(DEFAULT_IDLE_MS, idleMs - 1_000))
    this.owner.release(this)
  }

  #ended(): void {
    // A body that runs to the connection's end is complete now; anything else was cut.
    if (this.#attempt !== undefined && this.#reader.ended()) this.#complete(false)
    else this.#lost(protocolError('the receiver closed the connection before its response ended'))
  }

  #lost(cause: unknown): void {
    const attempt = this.#attempt
    this.#attempt = undefined
    this.destroy()
    if (attempt === undefined) return
    attempt.carrier = undefined
    if (!attempt.answered && !this.#heard && this.#carried > 1 && !attempt.resent) {
      attempt.resent = true
      this.owner.resend(attempt)
      return
    }
    attempt.fail(cause)
    attempt.end()
  }

  #closed(): void {
    this.#gone = true
    // Defensive: Node emits 'end' or 'error' before 'close' when the receiver closes or breaks the
    // connection, and this class lets go of its attempt before destroying the socket itself.
    // Stryker disable next-line all: unreachable with an attempt, as said above.
    if (this.#attempt !== undefined) this.#lost(protocolError('the connection closed before the response ended'))
    this.owner.remove(this)
  }
}
