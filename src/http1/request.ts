import type { TransportFailure } from '../core/transport-failure.js'
import type { ResponseHead } from './response-reader.js'

/**
 * One request on eventwire's HTTP/1.1 stack: a POST, ready to send. The webhook engine's requests
 * and the client's batches are both of this shape.
 */
export interface Http1Request {
  /** Full URL, and the same split into origin and path (parsed once by the sender). */
  readonly url: string
  readonly origin: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  /** The body: a string is sent as its UTF-8 bytes. */
  readonly body: string | Uint8Array
  /** Time the attempt may take, in ms: waiting for a connection, connecting, the head and the body together. */
  readonly timeoutMs: number
  /** Ends the attempt when it aborts, as its deadline would. */
  readonly signal?: AbortSignal | undefined
  /**
   * For an answer that is not 2xx: answer only once its reason phrase, header fields and up to
   * this many bytes of its body are read, and keep them in the head. Absent or 0: every answer is
   * given at its head, and nothing of it is kept.
   */
  readonly keepRefusal?: number | undefined
}

/** An attempt that got no answer: what went wrong below HTTP, and the error that says so. */
export interface Http1Failure {
  readonly ok: false
  readonly failure: TransportFailure
  readonly cause: unknown
}

/** How an attempt on the stack ends: the response's head, or the failure. */
export type Http1Answer = ResponseHead | Http1Failure
