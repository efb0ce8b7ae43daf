import { isoNow } from '../core/clock.js'
import { MAX_BATCH_BYTES } from '../core/limits.js'
import type { MessageType } from '../core/messages.js'
import { LIBRARY } from '../core/version.js'
import type { DeliveryError } from './delivery-error.js'
import type { Queue } from '../core/queue.js'

/** A message the client accepted: its wire JSON, exactly as sent. */
export interface MessageRecord {
  readonly type: MessageType
  readonly messageId: string
  /** The message's JSON, serialized once when the call was made. */
  readonly json: string
}

/** Called once per message with its fate: `undefined` when delivered, the error otherwise. */
export type MessageCallback = (error: DeliveryError | undefined) => void

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
const CONTEXT = JSON.stringify({ library: LIBRARY })

/**
 * Moves messages from the head of the queue into one batch body, built by concatenation, for as
 * long as the body stays within `maxBytes` ({@link MAX_BATCH_BYTES} by default) and the batch
 * within `maxCount` messages. The first message always fits: a message is at most 32 KB.
 */
export function takeBatch(queue: Queue<QueuedMessage>, maxCount: number, maxBytes: number = MAX_BATCH_BYTES): Batch {
  const id = crypto.randomUUID()
  const suffix = `],"context":${CONTEXT},"messageId":"${id}","sentAt":"${isoNow()}"}`
  const messages: QueuedMessage[] = []
  let body = PREFIX
  let bytes = PREFIX.length + suffix.length
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
