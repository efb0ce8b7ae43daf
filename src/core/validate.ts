import { isoNow } from './clock.js'
import { ValidationError, type ValidationErrorCode } from './errors/validation-error.js'
import { checkJsonValue } from './json-value.js'
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
  return typeof value
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== ''
}

function copyFields(
  wire: Record<string, unknown>,
  input: Record<string, unknown>,
  fields: ReadonlyArray<readonly [string, FieldKind]>,
  type: MessageType,
): void {
  for (const [name, kind] of fields) {
    const value = input[name]
    if (value === undefined) continue
    if (kind === 'string' ? typeof value !== 'string' : !isObject(value)) {
      throw new ValidationError(
        'ERR_INVALID_FIELD',
        name,
        `${type}(): \`${name}\` must be ${kind === 'string' ? 'a string' : 'a plain object'}, got ${describe(value)}.`,
      )
    }
    if (kind === 'object') checkJsonValue(value, name, 1)
    wire[name] = value
  }
}

function toTimestamp(value: unknown, type: MessageType): string {
  if (value === undefined) return isoNow()
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString()
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return value
  throw new ValidationError(
    'ERR_INVALID_FIELD',
    'timestamp',
    `${type}(): \`timestamp\` must be a valid Date or an ISO 8601 string, got ${value instanceof Date ? 'an invalid Date' : JSON.stringify(String(value))}.`,
  )
}

function toMessageId(value: unknown, type: MessageType): string {
  if (value === undefined) return crypto.randomUUID()
  if (typeof value === 'string' && value !== '') return value
  throw new ValidationError('ERR_INVALID_FIELD', 'messageId', `${type}(): \`messageId\` must be a non-empty string.`)
}

/**
 * Checks a call's input against the rules of its type and returns the message to put on the wire:
 * only the wire fields, with `messageId` and `timestamp` filled in when not given.
 *
 * @throws {@link ValidationError} naming the first field that breaks a rule.
 */
export function toWireMessage(type: MessageType, input: unknown): WireMessage {
  if (!isObject(input)) {
    throw new ValidationError('ERR_INVALID_FIELD', 'message', `${type}() takes a message object, got ${describe(input)}.`)
  }
  const wire: Record<string, unknown> = { type }
  copyFields(wire, input, COMMON_FIELDS, type)
  copyFields(wire, input, TYPE_FIELDS[type], type)
  copyFields(wire, input, TRAILING_FIELDS, type)

  for (const [name, code] of REQUIRED[type]) {
    if (!isPresent(wire[name])) {
      throw new ValidationError(code, name, `${type}() needs a non-empty \`${name}\`.`)
    }
  }
  if (type !== 'alias' && !isPresent(wire['userId']) && !isPresent(wire['anonymousId'])) {
    throw new ValidationError(
      'ERR_MISSING_IDENTITY',
      'userId',
      `${type}() needs a \`userId\` or an \`anonymousId\` to say who the call is about.`,
    )
  }
  wire['messageId'] = toMessageId(input['messageId'], type)
  wire['timestamp'] = toTimestamp(input['timestamp'], type)
  return wire as WireMessage
}
