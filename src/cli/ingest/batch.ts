import {
  checkMessage,
  MESSAGE_TYPES,
  MessageTooLargeError,
  ValidationError,
  type MessageType,
  type WireMessage,
} from '../../index.js'

/** Why the ingest server refused a request; sent back as `code` beside a readable `error`. */
export type RejectionCode =
  | 'ERR_NOT_FOUND'
  | 'ERR_METHOD'
  | 'ERR_UNAUTHORIZED'
  | 'ERR_ORIGIN'
  | 'ERR_BODY_TOO_LARGE'
  | 'ERR_ENCODING'
  | 'ERR_NOT_JSON'
  | 'ERR_BAD_BATCH'
  | 'ERR_MESSAGE_TOO_LARGE'
  | 'ERR_UNAVAILABLE'
  | 'ERR_RATE_LIMITED'
  | 'ERR_INTERNAL'
  | ValidationError['code']

/** A request the ingest server answers with an error status, and why. */
export class BatchRejection extends Error {
  /** The source it refused, when it was known at the refusal: a label for the metrics. */
  source: string | undefined = undefined

  constructor(
    readonly status: number,
    readonly code: RejectionCode,
    message: string,
    /** Seconds the sender should wait before it sends again, told as `Retry-After`. */
    readonly retryAfterS?: number,
  ) {
    super(message)
  }
}

const bad = (code: RejectionCode, message: string) => new BatchRejection(400, code, message)

/** True for a non-null, non-array object: what JSON calls an object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isMessageType(value: unknown): value is MessageType {
  return (MESSAGE_TYPES as readonly unknown[]).includes(value)
}

function checkItem(item: unknown, index: number, shared: Record<string, unknown>): WireMessage {
  if (!isObject(item)) throw bad('ERR_BAD_BATCH', `batch[${index}]: expected a message object.`)
  const type = item['type']
  if (!isMessageType(type)) {
    throw bad(
      'ERR_BAD_BATCH',
      `batch[${index}]: \`type\` must be one of ${MESSAGE_TYPES.join(', ')}; got ${JSON.stringify(type) ?? 'nothing'}.`,
    )
  }
  const input = { ...shared, ...item }
  if (isObject(shared['context']) && isObject(item['context']))
    input['context'] = { ...shared['context'], ...item['context'] }
  // RudderStack's clients send the time of the call as `originalTimestamp`, and no `timestamp`.
  const original = input['timestamp'] === undefined ? input['originalTimestamp'] : undefined
  if (typeof original === 'string') {
    try {
      return checkMessage(type, { ...input, timestamp: original })
    } catch (error) {
      // One that is not a time costs the call nothing: it gets the time it arrived, as without one.
      if (!(error instanceof ValidationError && error.field === 'timestamp')) throw rejectionOf(error, index)
    }
  }
  try {
    return checkMessage(type, input)
  } catch (error) {
    throw rejectionOf(error, index)
  }
}

/** A message the client's rules refused, as the 400 that names it; anything else as it is. */
function rejectionOf(error: unknown, index: number): unknown {
  if (error instanceof ValidationError) return bad(error.code, `batch[${index}]: ${error.message}`)
  if (error instanceof MessageTooLargeError)
    return bad(
      'ERR_MESSAGE_TOO_LARGE',
      `batch[${index}]: the message is ${error.bytes} bytes of JSON; the limit is ${error.limit}.`,
    )
  return error
}

/** A batch body parsed as far as its shape: a JSON object with a non-empty `batch` array. */
export interface BatchBody {
  readonly batch: readonly unknown[]
  readonly [field: string]: unknown
}

/**
 * Why JSON.parse refused a text, without the piece of the text that V8 quotes (`Unexpected token
 * 's', "…"edSecret":s3cr"… is not valid JSON`): that piece may be a write key or a secret, and
 * the message goes to logs and to the sender.
 */
export function jsonProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const quoted = message.indexOf(', "')
  return quoted === -1 ? message : `${message.slice(0, quoted)}; the text near it is left out`
}

/**
 * Parses a `POST /v1/batch` body as far as its shape, so that the write key in it can be checked
 * before its messages are.
 *
 * @throws {@link BatchRejection} (400) for a body that is not JSON or has no `batch` array.
 */
export function parseBatchBody(body: string): BatchBody {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch (error) {
    throw bad('ERR_NOT_JSON', `the body is not JSON (${jsonProblem(error)}).`)
  }
  if (!isObject(parsed) || !Array.isArray(parsed['batch']))
    throw bad('ERR_BAD_BATCH', 'the body must be a JSON object with a `batch` array of messages.')
  if (parsed['batch'].length === 0) throw bad('ERR_BAD_BATCH', '`batch` is empty.')
  return parsed as BatchBody
}

/**
 * Parses the body of one call (`POST /v1/track` and the like) as a batch of that one message,
 * its type the path's, so that it is checked as any batch is. A `writeKey`, `context` or
 * `integrations` in the body stays on the message; the key is also the batch's, to be checked.
 *
 * @throws {@link BatchRejection} (400) for a body that is not a JSON object.
 */
export function parseCallBody(body: string, type: MessageType): BatchBody {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch (error) {
    throw bad('ERR_NOT_JSON', `the body is not JSON (${jsonProblem(error)}).`)
  }
  if (!isObject(parsed)) throw bad('ERR_BAD_BATCH', `the body must be a JSON object: one ${type} message.`)
  const { writeKey, ...message } = parsed
  return { batch: [{ ...message, type }], ...(writeKey === undefined ? {} : { writeKey }) }
}

/**
 * Checks a batch's messages with the client's own rules (types, required fields, JSON values,
 * 32,000 bytes per message) and returns them. Batch-level `context` and `integrations` apply to
 * every message, the message's own fields winning. One bad message rejects the whole batch, as the
 * client would have refused the call.
 *
 * @throws {@link BatchRejection} (400) naming the first message and field at fault.
 */
export function checkBatch(body: BatchBody): WireMessage[] {
  const shared: Record<string, unknown> = {}
  for (const field of ['context', 'integrations'] as const) {
    const value = body[field]
    if (value === undefined) continue
    if (!isObject(value)) throw bad('ERR_BAD_BATCH', `the batch's \`${field}\` must be an object.`)
    shared[field] = value
  }
  return body.batch.map((item, index) => checkItem(item, index, shared))
}
