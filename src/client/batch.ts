import { isoNow } from '../core/clock.js'
import { MAX_BATCH_BYTES } from '../core/limits.js'
import type { JsonObject } from '../core/json-value.js'
import { LIBRARY } from '../core/version.js'
import { utf8ByteLength } from '../core/utf8.js'
import type { DeliveryError, MessageRecord } from './delivery-error.js'
import type { Queue } from '../core/queue.js'

/**
 * Called once per message with its fate: `undefined` when delivered, the error otherwise; `outcome`
 * tells the three apart, with a call a middleware dropped (`undefined`, `'dropped'`: nothing was
 * sent, nothing failed).
 */
export type MessageCallback = (error: DeliveryError | undefined, outcome: MessageOutcome) => void

/** How a message ended: sent (the endpoint accepted it), failed (see the error), or dropped by a middleware. */
export type MessageOutcome = 'sent' | 'failed' | 'dropped'

/** A queued message: its JSON, serialized once, and its UTF-8 size, counted once. */
export interface QueuedMessage extends MessageRecord {
  readonly bytes: number
  /** Position in call order, for `flush()`. */
  readonly seq: number
  readonly callback: MessageCallback | undefined
}

/** A request body and the messages in it; the same body is resent on retry. */
export interface Batch {
  /** The batch's own `messageId`. */
  readonly id: string
  readonly body: string
  /** UTF-8 bytes of `body`. */
  readonly bytes: number
  /** UTF-8 bytes of the messages' JSON alone. */
  readonly messageBytes: number
  readonly messages: readonly QueuedMessage[]
}

const PREFIX = '{"batch":['

/** What every batch body of a client carries besides its messages and ids, serialized once. */
export interface Envelope {
  /** JSON object members, without braces: `context` and, when the key goes in the body, `writeKey`. */
  readonly fields: string
  /** UTF-8 bytes of `fields`. */
  readonly bytes: number
}

/**
 * The envelope of a client's batches: the `defaultContext` option's fields and `context.library`
 * (always the client's own), and the write key when it travels in the body (the `writeKeyIn:
 * 'body'` option) rather than in the `Authorization` header.
 */
export function batchEnvelope(writeKeyInBody: string | undefined, defaultContext?: JsonObject): Envelope {
  const context = `"context":${JSON.stringify({ ...defaultContext, library: LIBRARY })}`
  const fields = writeKeyInBody === undefined ? context : `${context},"writeKey":${JSON.stringify(writeKeyInBody)}`
  return { fields, bytes: utf8ByteLength(fields) }
}

/** How much one batch may take. */
export interface BatchLimits {
  readonly maxCount: number
  /** @defaultValue {@link MAX_BATCH_BYTES} */
  readonly maxBytes?: number
}

/**
 * Moves messages from the head of the queue into one batch body, built by concatenation, for as
 * long as the body stays within `maxBytes` and the batch within `maxCount` messages. The first
 * message always fits: a message is at most 32 KB.
 */
export function takeBatch(
  queue: Queue<QueuedMessage>,
  envelope: Envelope,
  { maxCount, maxBytes = MAX_BATCH_BYTES }: BatchLimits,
): Batch {
  const id = crypto.randomUUID()
  const ids = `"messageId":"${id}","sentAt":"${isoNow()}"}`
  const suffix = `],${envelope.fields},${ids}`
  const messages: QueuedMessage[] = []
  let body = PREFIX
  // `],`, the envelope, `,` and the ids (ASCII: their length is their size).
  let bytes = PREFIX.length + 3 + envelope.bytes + ids.length
  let messageBytes = 0
  for (let next = queue.peek(); next !== undefined && messages.length < maxCount; next = queue.peek()) {
    const cost = messages.length === 0 ? next.bytes : next.bytes + 1
    if (bytes + cost > maxBytes) break
    queue.shift()
    body += messages.length === 0 ? next.json : `,${next.json}`
    messages.push(next)
    bytes += cost
    messageBytes += next.bytes
  }
  return { id, body: body + suffix, bytes, messageBytes, messages }
}
