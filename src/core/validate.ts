import { isoNow } from './clock.js'
import { ValidationError, type ValidationErrorCode } from './errors/validation-error.js'
import { describeError } from './describe-error.js'
import { EventwireError } from './errors/eventwire-error.js'
import { checkJsonValue, isPlain } from './json-value.js'
import type { MessageType, WireMessage } from './messages.js'

type FieldKind = 'string' | 'object'

const COMMON_FIELDS: ReadonlyArray<readonly [string, FieldKind]> = [
  ['userId', 'string'],
  ['anonymousId', 'string'],
]

const TYPE_FIELDS: Record<MessageType, ReadonlyArray<readonly [string, FieldKind]>> = {
  identify: [['traits', 'object']],
  track: [
    ['event', 'string'],
    ['properties', 'object'],
  ],
  page: [
    ['name', 'string'],
    ['category', 'string'],
    ['properties', 'object'],
  ],
  screen: [
    ['name', 'string'],
    ['category', 'string'],
    ['properties', 'object'],
  ],
  group: [
    ['groupId', 'string'],
    ['traits', 'object'],
  ],
  alias: [['previousId', 'string']],
}

const TRAILING_FIELDS: ReadonlyArray<readonly [string, FieldKind]> = [
  ['context', 'object'],
  ['integrations', 'object'],
]

/** Fields a type cannot go without, each with the code thrown when it is missing or empty. */
const REQUIRED: Record<MessageType, ReadonlyArray<readonly [string, ValidationErrorCode]>> = {
  identify: [],
  track: [['event', 'ERR_MISSING_EVENT']],
  page: [],
  screen: [],
  group: [['groupId', 'ERR_MISSING_GROUP_ID']],
  alias: [
    ['userId', 'ERR_MISSING_USER_ID'],
    ['previousId', 'ERR_MISSING_PREVIOUS_ID'],
  ],
}

/** True for a non-null, non-array object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object' && !isPlain(value)) return `a ${value.constructor?.name ?? 'non-plain object'}`
  return typeof value
}

function wrongType(type: MessageType, name: string, expected: string, value: unknown): ValidationError {
  return new ValidationError(
    'ERR_INVALID_FIELD',
    name,
    `${type}(): \`${name}\` must be ${expected}, got ${describe(value)}.`,
  )
}

/** True for an object JSON would write as `{}`: no property, or only `undefined` ones. */
function isEmptyObject(value: Record<string, unknown>): boolean {
  for (const key in value) if (value[key] !== undefined) return false
  return true
}

/**
 * Copies the fields that are set. As the Go client does (`omitempty`), an empty string and an
 * object with nothing in it count as not set and stay off the wire, so the same call sends the
 * same JSON from either client, and a rule that needs a field treats `''` as missing.
 */
function copyFields(
  wire: Record<string, unknown>,
  input: Record<string, unknown>,
  fields: ReadonlyArray<readonly [string, FieldKind]>,
  type: MessageType,
): void {
  for (const [name, kind] of fields) {
    const value = input[name]
    if (value === undefined || value === '') continue
    if (kind === 'string') {
      if (typeof value !== 'string') throw wrongType(type, name, 'a string', value)
    } else {
      if (!isObject(value) || !isPlain(value)) throw wrongType(type, name, 'a plain object', value)
      checkJsonValue(value, name, 1)
      if (isEmptyObject(value)) continue
    }
    wire[name] = value
  }
}

/**
 * An ISO 8601 date and time with a time zone (the RFC 3339 profile, the format every ingest API
 * parses): `2024-05-06T10:00:00Z`, `2024-05-06T12:00:00.123+02:00`. Seconds and fractions are
 * optional; a date alone or a time without a zone is refused, because the receiver would have to
 * guess the zone.
 */
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)$/i

/** Whether the string is an ISO 8601 date-time with a zone, naming a day that exists. */
function isIsoDateTime(value: string): boolean {
  const match = ISO_DATE_TIME.exec(value)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  // A date that does not exist rolls over into another month: 2024-02-30 into March, day 00 into
  // the month before, month 13 into the next year. (setUTCFullYear, not Date.UTC, which reads
  // years 0 to 99 as 1900 to 1999.)
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  return date.getUTCMonth() === month - 1
}

function toTimestamp(value: unknown, type: MessageType): string {
  if (value === undefined) return isoNow()
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString()
  if (typeof value === 'string' && isIsoDateTime(value)) return value
  throw new ValidationError(
    'ERR_INVALID_FIELD',
    'timestamp',
    `${type}(): \`timestamp\` must be a valid Date or an ISO 8601 date-time with a time zone (such as 2024-05-06T10:00:00Z), got ${value instanceof Date ? 'an invalid Date' : JSON.stringify(String(value))}.`,
  )
}

/** Longest `messageId` accepted, in characters (a UUID has 36). */
export const MAX_MESSAGE_ID_LENGTH = 255

/** A `messageId`: 1 to {@link MAX_MESSAGE_ID_LENGTH} printable ASCII characters, no space at either end. */
const MESSAGE_ID = new RegExp(`^(?! )[\\x20-\\x7e]{0,${MAX_MESSAGE_ID_LENGTH - 1}}[\\x21-\\x7e]$`)

/**
 * Whether `value` can be a `messageId`: 1 to {@link MAX_MESSAGE_ID_LENGTH} printable ASCII
 * characters (0x20-0x7E), not starting or ending with a space. The webhook engine sends the id as
 * the `Webhook-Id` header and signs it, so the rule is what a header value carries unchanged
 * everywhere: no CR, LF or other control character, nothing beyond ASCII (Latin-1 would pass
 * `fetch` but not every receiver's decoding), and no space at either end (receivers trim it).
 * Spaces inside are kept: the Go client's own fixtures send `I'm unique`. The client,
 * `eventwire dev` and the webhook side share it, so that an id one of them accepts is never
 * refused by the next.
 */
export function isMessageId(value: unknown): value is string {
  return typeof value === 'string' && MESSAGE_ID.test(value)
}

/**
 * The `messageId` to send: the given one when {@link isMessageId} accepts it, a new UUID v4 when
 * none is given. An empty id is absent, as both Go clients take it: an id is made for it.
 * `caller` prefixes the message (`track()`, `deliver()`).
 *
 * @throws {@link ValidationError} `ERR_INVALID_FIELD` naming the first character at fault.
 */
export function toMessageId(value: unknown, caller: string): string {
  if (value === undefined || value === '') return crypto.randomUUID()
  if (isMessageId(value)) return value
  // Names the first character at fault rather than quoting an id that may break a log line.
  const at = typeof value === 'string' ? value.search(/[^\x20-\x7e]/) : -1
  throw new ValidationError(
    'ERR_INVALID_FIELD',
    'messageId',
    `${caller}: \`messageId\` must be 1 to ${MAX_MESSAGE_ID_LENGTH} printable ASCII characters, no space at either end (it is sent as the Webhook-Id header)${
      at < 0 ? '' : `, not ${JSON.stringify((value as string)[at])} (at ${at + 1})`
    }.`,
  )
}

/**
 * Checks a call's input against the rules of its type and returns the message to put on the wire:
 * only the wire fields, with `messageId` and `timestamp` filled in when not given.
 *
 * @throws {@link ValidationError} naming the first field that breaks a rule.
 */
export function toWireMessage(type: MessageType, input: unknown): WireMessage {
  return readingCallerData('message', `${type}(): reading the message`, () => buildWireMessage(type, input))
}

/**
 * Runs `read` over data the caller gave. A getter, a proxy trap or a method of theirs (a Date's)
 * that throws while it is read becomes a `ValidationError` `ERR_INVALID_FIELD` on `field`, naming
 * what was thrown and keeping it as `cause`; eventwire's own errors pass through as they are.
 */
export function readingCallerData<T>(field: string, doing: string, read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof EventwireError) throw error
    throw new ValidationError(
      'ERR_INVALID_FIELD',
      field,
      `${doing} threw (${describeError(error)}); pass plain data.`,
      { cause: error },
    )
  }
}

function buildWireMessage(type: MessageType, input: unknown): WireMessage {
  if (!isObject(input)) {
    throw new ValidationError(
      'ERR_INVALID_FIELD',
      'message',
      `${type}() takes a message object, got ${describe(input)}.`,
    )
  }
  const wire: Record<string, unknown> = { type }
  copyFields(wire, input, COMMON_FIELDS, type)
  copyFields(wire, input, TYPE_FIELDS[type], type)
  copyFields(wire, input, TRAILING_FIELDS, type)

  // copyFields left '' and empty objects off the wire: what is on it is set.
  for (const [name, code] of REQUIRED[type]) {
    if (wire[name] === undefined) {
      throw new ValidationError(code, name, `${type}() needs a non-empty \`${name}\`.`)
    }
  }
  // Alias requires userId above; the others need one of the two.
  if (wire['userId'] === undefined && wire['anonymousId'] === undefined) {
    throw new ValidationError(
      'ERR_MISSING_IDENTITY',
      'userId',
      `${type}() needs a \`userId\` or an \`anonymousId\` to say who the call is about.`,
    )
  }
  wire['messageId'] = toMessageId(input['messageId'], `${type}()`)
  wire['timestamp'] = toTimestamp(input['timestamp'], type)
  return wire as WireMessage
}
