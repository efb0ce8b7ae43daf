import { isoNow } from '../../core/clock.js'
import { ValidationError, type ValidationErrorCode } from '../../core/errors/validation-error.js'
import { isObject } from '../../core/validate.js'
import { checkJsonValue, type JsonObject } from '../../core/json-value.js'
import type { WebhookEvent, WebhookEventType } from './event.js'

/** A webhook request body, before serialization: the fields {@link toWebhookPayload} lists. */
export type WebhookPayload = Record<string, unknown> & { type: WebhookEventType; timestamp: string }

const TYPES: ReadonlySet<string> = new Set<WebhookEventType>([
  'page',
  'screen',
  'identify',
  'track',
  'alias',
  'group',
  'delete',
])

function fail(code: ValidationErrorCode, field: string, message: string): never {
  throw new ValidationError(code, field, `toWebhookPayload(): ${message}`)
}

function requireString(event: Record<string, unknown>, field: string, code: ValidationErrorCode): string {
  const value = event[field]
  if (value === undefined || value === '')
    fail(code, field, `a ${String(event['type'])} event needs a non-empty \`${field}\`.`)
  if (typeof value !== 'string') fail('ERR_INVALID_FIELD', field, `\`${field}\` must be a string, got ${typeof value}.`)
  return value
}

function optionalObject(event: Record<string, unknown>, field: string): Record<string, unknown> {
  const value = event[field]
  if (value === undefined) return {}
  if (!isObject(value)) fail('ERR_INVALID_FIELD', field, `\`${field}\` must be a plain object.`)
  // The client's rule for JSON values: what is sent is what was given.
  checkJsonValue(value, field, 1)
  return value
}

function timestampOf(value: unknown): string {
  if (value === undefined) return isoNow()
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : undefined
  if (!date || Number.isNaN(date.getTime())) {
    fail('ERR_INVALID_FIELD', 'timestamp', '`timestamp` must be a valid Date or ISO 8601 string.')
  }
  return date.toISOString()
}

/**
 * Turns a platform call into a webhook request body, which carries exactly these fields:
 * `version: 1` (not on `delete`), `type`, `userId` (not on `alias`), `timestamp` as ISO 8601 with
 * milliseconds and `Z`, `context`, and per type: page `properties`; screen `name`; identify
 * `traits`; track `event` and `properties`; alias `"Previous ID"` and `"User ID"`; group
 * `groupId` and `traits`; delete only `type`, `userId` and `timestamp`. Nothing else is copied.
 *
 * @throws {@link ValidationError} naming the field, for an unknown type, a missing id, a field of
 * the wrong type, or a value JSON cannot carry unchanged (named by its path, e.g.
 * `properties.items[2]`: a cycle, BigInt, NaN, function, Map...).
 * @example
 * ```ts
 * import { toWebhookPayload } from 'eventwire/webhook'
 *
 * toWebhookPayload({ type: 'alias', previousId: 'anon-1', userId: 'u1' })
 * // { version: 1, type: 'alias', timestamp: '…', context: {}, 'Previous ID': 'anon-1', 'User ID': 'u1' }
 * ```
 */
export function toWebhookPayload<Data extends object = JsonObject>(event: WebhookEvent<Data>): WebhookPayload {
  if (!isObject(event)) fail('ERR_INVALID_FIELD', 'event', 'expected an event object.')
  const input = event as unknown as Record<string, unknown>
  const type = input['type']
  if (typeof type !== 'string' || !TYPES.has(type)) {
    fail(
      'ERR_INVALID_FIELD',
      'type',
      `unknown event type ${JSON.stringify(type)}; expected one of ${[...TYPES].join(', ')}.`,
    )
  }
  const timestamp = timestampOf(input['timestamp'])
  if (type === 'delete') {
    return { type, userId: requireString(input, 'userId', 'ERR_MISSING_USER_ID'), timestamp }
  }
  if (type === 'alias') {
    const previousId = requireString(input, 'previousId', 'ERR_MISSING_PREVIOUS_ID')
    const userId = requireString(input, 'userId', 'ERR_MISSING_USER_ID')
    return {
      version: 1,
      type,
      timestamp,
      context: optionalObject(input, 'context'),
      'Previous ID': previousId,
      'User ID': userId,
    }
  }
  const payload: WebhookPayload = {
    version: 1,
    type: type as WebhookEventType,
    userId: requireString(input, 'userId', 'ERR_MISSING_USER_ID'),
    timestamp,
    context: optionalObject(input, 'context'),
  }
  switch (type) {
    case 'page':
      payload['properties'] = optionalObject(input, 'properties')
      break
    case 'screen':
      if (typeof input['name'] === 'string') payload['name'] = input['name']
      else if (input['name'] !== undefined) fail('ERR_INVALID_FIELD', 'name', '`name` must be a string.')
      break
    case 'identify':
      payload['traits'] = optionalObject(input, 'traits')
      break
    case 'track':
      payload['event'] = requireString(input, 'event', 'ERR_MISSING_EVENT')
      payload['properties'] = optionalObject(input, 'properties')
      break
    case 'group':
      payload['groupId'] = requireString(input, 'groupId', 'ERR_MISSING_GROUP_ID')
      payload['traits'] = optionalObject(input, 'traits')
      break
  }
  return payload
}
