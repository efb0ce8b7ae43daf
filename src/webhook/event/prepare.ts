import { ValidationError } from '../../core/errors/validation-error.js'
import { serializeMessage } from '../../core/serialize.js'
import { isObject, readingCallerData, toMessageId } from '../../core/validate.js'
import { checkPlanned, checkSchemaPlan, planViolationError, type SchemaPlan } from '../../core/plan.js'
import { isEnabledFor } from './integrations.js'
import { toWebhookPayload } from './payload.js'

/** An event that passed the rules, as every engine needs it. */
export interface CheckedEvent {
  /** The event's `messageId`, or a new UUID: the id results, notices and the `Webhook-Id` header carry. */
  readonly eventId: string
  /** The JSON body, serialized once: its UTF-8 encoding is what is signed and sent. */
  readonly body: string
  /** False when the event's `integrations` turn this destination off. */
  readonly enabled: boolean
}

/**
 * The one rule set for a webhook event, which `deliver()` and `WebhookQueue.enqueue()` both apply
 * (a worker sends the bodies its queue checked), so they cannot disagree: the rules of
 * {@link toWebhookPayload} (type, ids, field types, and every object field checked as the client
 * checks JSON values: no cycle, BigInt, NaN, function, Map...), then `integrations`, a plain object
 * when set. An invalid event is refused even when its `integrations` would skip it.
 *
 * @throws {@link ValidationError} naming the field or path; also for an event whose getters throw.
 */
export function checkEvent(event: unknown): CheckedEvent {
  return readingCallerData('event', 'Reading the event', () => {
    const body = serializeMessage(toWebhookPayload(event as never))
    const input = event as Record<string, unknown>
    const integrations = input['integrations']
    if (integrations !== undefined && !isObject(integrations)) {
      throw new ValidationError(
        'ERR_INVALID_FIELD',
        'integrations',
        '`integrations` must be a plain object such as { Webhooks: false }.',
      )
    }
    // The id travels as the Webhook-Id header: the client's rule, so that an id it sent is never refused here.
    const eventId = toMessageId(input['messageId'], `${String(input['type'])} event`)
    return { eventId: flattened(eventId), body, enabled: isEnabledFor(integrations) }
  })
}

/** Matches every id: {@link flattened} runs it for its side effect. */
const ANYTHING = /^/

/**
 * The id as one flat string. Node's `randomUUID()` joins a new id from twenty pieces, and V8 keeps
 * such a string as a tree of about fourteen objects (480 bytes on the heap against 56 flat) for as
 * long as it lives: hours, for an event waiting for a retry. A regular expression reads only flat
 * strings, so V8 flattens its subject first, and the tree is collected. Reading one character
 * (`charCodeAt`) did this up to Node 20; V8 12 (Node 22) no longer flattens there. (Here, not in
 * the shared rule: the client's browser bundle has no room for it.)
 */
function flattened(id: string): string {
  ANYTHING.test(id)
  return id
}

/**
 * Checks an event against a plan (see `checkPlanned`) and returns what to deliver: the schema's
 * output in place of the checked field.
 *
 * @throws {@link ValidationError} `ERR_PLAN_VIOLATION` for an event that breaks the plan, naming the
 * field; `caller` opens the message (`deliver()`, `enqueue()`).
 */
export function followPlan(plan: SchemaPlan, event: unknown, caller: string): unknown {
  // The event's own type, read once with its other fields: what is checked is what is sent.
  const check = checkPlanned(plan, undefined, event)
  if (check.ok) return check.value
  throw planViolationError(caller, check)
}

/**
 * Splits the `plan` setting of an engine from the settings it shares with the others: the plan,
 * checked (entries must be synchronous Standard Schemas), and the rest as given.
 *
 * @throws {@link OptionsError} for a plan entry that is not a Standard Schema.
 */
export function takePlan<Settings>(settings: Settings): { plan: SchemaPlan | undefined; rest: Settings } {
  if (!isObject(settings) || !('plan' in settings)) return { plan: undefined, rest: settings }
  const { plan, ...rest } = settings as Record<string, unknown>
  if (plan !== undefined) checkSchemaPlan(plan)
  return { plan: plan as SchemaPlan | undefined, rest: rest as Settings }
}
