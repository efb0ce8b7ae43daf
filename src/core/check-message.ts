import { MessageTooLargeError } from './errors/message-too-large-error.js'
import { ValidationError } from './errors/validation-error.js'
import { MAX_MESSAGE_BYTES } from './limits.js'
import { MESSAGE_TYPES, type MessageType, type WireMessage } from './messages.js'
import { serializeMessage } from './serialize.js'
import { utf8ByteLength } from './utf8.js'
import { toWireMessage } from './validate.js'

/** A call's message, checked and serialized once: what the client queues. */
export interface SerializedMessage {
  readonly wire: WireMessage
  /** The JSON sent, made once at the call: later changes to the caller's objects are not in it. */
  readonly json: string
  /** UTF-8 bytes of `json`. */
  readonly bytes: number
}

/**
 * The client's rules for one call: the type's fields, JSON values, then at most
 * {@link MAX_MESSAGE_BYTES} of JSON.
 *
 * @throws {@link ValidationError} naming the first field that breaks a rule;
 * {@link MessageTooLargeError} for JSON over the limit.
 */
export function serializeCall(type: MessageType, input: unknown): SerializedMessage {
  const wire = toWireMessage(type, input)
  const json = serializeMessage(wire)
  const bytes = utf8ByteLength(json)
  if (bytes > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(bytes, MAX_MESSAGE_BYTES)
  return { wire, json, bytes }
}

/**
 * Checks a message with the rules `Client` applies to a call of that type (required fields,
 * field types, JSON values, a valid `timestamp` and `messageId`, at most 32,000 bytes of JSON)
 * and returns it as the client would send it: only the type's wire fields, with `messageId` and
 * `timestamp` filled in when not given. Nothing is sent. For messages that arrive from outside
 * your program (a queue, an HTTP body) and should be refused with the client's own errors, as
 * `eventwire dev` does with every batch it receives.
 *
 * The result is a new object, parsed from the JSON the client would send: later changes to
 * `input` do not reach it.
 *
 * @param type - One of {@link MESSAGE_TYPES}; anything else is a `ValidationError` on `type`.
 * @throws {@link ValidationError} naming the first field that breaks a rule (as `track()` and the
 * other calls throw it); {@link MessageTooLargeError} for a message over 32,000 bytes of JSON.
 * @example
 * ```ts
 * import { checkMessage, isEventwireError } from 'eventwire'
 *
 * try {
 *   const message = checkMessage('track', { userId: 'u1', event: 'Signed Up', properties: { plan: 'pro' } })
 *   console.log(message.messageId, message.timestamp)
 * } catch (error) {
 *   if (isEventwireError(error)) console.error(error.code, error.message)
 *   else throw error
 * }
 * ```
 */
export function checkMessage(type: MessageType, input: unknown): WireMessage {
  if (!(MESSAGE_TYPES as readonly unknown[]).includes(type)) {
    throw new ValidationError(
      'ERR_INVALID_FIELD',
      'type',
      `checkMessage(): \`type\` must be one of ${MESSAGE_TYPES.join(', ')}; got ${typeof type === 'string' ? JSON.stringify(type) : typeof type}.`,
    )
  }
  return JSON.parse(serializeCall(type, input).json) as WireMessage
}
