import { OptionsError } from '../core/errors/options-error.js'
import type { JsonObject } from '../core/json-value.js'
import {
  checkPlanned,
  checkSchemaPlan,
  type NoPlan,
  type PlannedEventName,
  type PlanCheck,
  type PlannedOutput,
  type SchemaIssue,
  type SchemaPlan,
  type TrackingPlan,
} from '../core/plan.js'
import { isObject } from '../core/validate.js'
import type { WebhookPayload } from './payload.js'
import { verifySignature } from './signature.js'

/** Headers as a receiver has them: a `Headers`, or Node's `IncomingHttpHeaders` (lowercase names). */
export type ReceivedHeaders = Headers | { readonly [name: string]: string | readonly string[] | undefined }

/** A delivery as a receiver has it: a fetch `Request`, or its headers and the raw body bytes. */
export type ReceivedWebhook =
  | Request
  | { readonly headers: ReceivedHeaders; readonly body: string | Uint8Array | ArrayBuffer }

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions<Plan> {
  /** The shared secret the sender signs with (`X-Signature`). */
  secret: string
  /** A plan of Standard Schemas (a `definePlan`): the payload is checked by it and typed by its schemas' outputs. */
  plan?: Plan | undefined
}

/** Why {@link verifyWebhook} refused a delivery. */
export type WebhookRefusal = 'missing_signature' | 'bad_signature' | 'malformed' | 'plan_violation'

/** The fields every payload of a planned `track`, `identify` or `group` carries. */
export interface PlannedPayloadFields {
  readonly version: 1
  readonly userId: string
  readonly timestamp: string
  readonly context: JsonObject
}

/**
 * A payload under a plan: a union on `type`, and for `track` on `event`, whose `properties` and
 * `traits` are the schemas' outputs; the types the plan does not cover as {@link WebhookPayload}.
 */
export type PlannedWebhookPayload<Plan extends TrackingPlan> =
  | (Plan extends { readonly events: object }
      ? {
          [Name in PlannedEventName<Plan>]: PlannedPayloadFields & {
            readonly type: 'track'
            readonly event: Name
            readonly properties: PlannedOutput<NonNullable<Plan['events']>[Name & keyof NonNullable<Plan['events']>]>
          }
        }[PlannedEventName<Plan>]
      : WebhookPayload & { readonly type: 'track' })
  | (PlannedPayloadFields & {
      readonly type: 'identify'
      readonly traits: Plan extends { readonly traits: infer Traits } ? PlannedOutput<Traits> : JsonObject
    })
  | (PlannedPayloadFields & {
      readonly type: 'group'
      readonly groupId: string
      readonly traits: Plan extends { readonly groupTraits: infer Traits } ? PlannedOutput<Traits> : JsonObject
    })
  | (WebhookPayload & { readonly type: 'page' | 'screen' | 'alias' | 'delete' })

/** What a receiver gets from {@link verifyWebhook}: a payload of `Plan`, or any payload without one. */
export type VerifiedPayload<Plan> = [Plan] extends [NoPlan]
  ? WebhookPayload
  : Plan extends TrackingPlan
    ? PlannedWebhookPayload<Plan>
    : WebhookPayload

/**
 * The outcome of {@link verifyWebhook}: the payload, or why it was refused. `malformed`: not JSON,
 * or not a webhook payload (a known `type`, a `timestamp`, a `userId` or, for `alias`, a `User ID`).
 */
export type VerifiedWebhook<Plan = NoPlan> =
  | { readonly ok: true; readonly payload: VerifiedPayload<Plan> }
  | {
      readonly ok: false
      readonly reason: WebhookRefusal
      /** With `plan_violation`: the field the plan refused (`properties.total`, `event`...). */
      readonly field?: string
      /** With `plan_violation`: what the schema found. */
      readonly issues?: readonly SchemaIssue[]
    }

/** Plans already checked (a receiver passes the same plan to every call): checked once each. */
const checkedPlans = new WeakSet<object>()

function signatureOf(headers: ReceivedHeaders): string | readonly string[] | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get('x-signature') ?? undefined
  // Node lowercases header names; an object written by hand may not.
  const fields = headers as { readonly [name: string]: string | readonly string[] | undefined }
  const name = Object.keys(fields).find((key) => key.toLowerCase() === 'x-signature')
  return name === undefined ? undefined : fields[name]
}

/** The event types a webhook body carries, and those whose body has a `userId`. */
const PAYLOAD_TYPES = new Set(['identify', 'track', 'page', 'screen', 'group', 'alias', 'delete'])

/** Whether a parsed body is a webhook payload: a known `type`, a `timestamp`, and a `userId` where one belongs. */
function isPayload(payload: Record<string, unknown>): boolean {
  const type = payload['type']
  if (typeof type !== 'string' || !PAYLOAD_TYPES.has(type) || typeof payload['timestamp'] !== 'string') return false
  return type === 'alias' ? typeof payload['User ID'] === 'string' : typeof payload['userId'] === 'string'
}

/**
 * Verifies a webhook delivery and returns its payload, parsed, and under a plan checked and typed
 * by it: `X-Signature` over the raw bytes (read once, never re-serialized), then JSON, then the
 * plan. Runs on Web Crypto in every runtime. Never throws for what arrives: every refusal is a
 * value with a `reason`.
 *
 * @throws {@link OptionsError} (as a rejection) for a missing secret, or a plan entry that is not a
 * synchronous Standard Schema.
 * @example
 * ```ts
 * import { z } from 'zod'
 * import { definePlan } from 'eventwire'
 * import { verifyWebhook } from 'eventwire/webhook'
 *
 * const plan = definePlan({ events: { 'Order Completed': z.object({ total: z.number() }) } })
 *
 * export async function handle(request: Request): Promise<Response> {
 *   const verified = await verifyWebhook(request, { secret: 's3cret', plan })
 *   if (!verified.ok) return new Response(verified.reason, { status: verified.reason === 'plan_violation' ? 422 : 401 })
 *   const { payload } = verified
 *   if (payload.type === 'track' && payload.event === 'Order Completed') console.log(payload.properties.total)
 *   return new Response(null, { status: 204 })
 * }
 * ```
 */
export async function verifyWebhook<Plan extends TrackingPlan | NoPlan = NoPlan>(
  delivery: ReceivedWebhook,
  options: VerifyWebhookOptions<Plan>,
): Promise<VerifiedWebhook<Plan>> {
  if (!isObject(options) || typeof options.secret !== 'string' || options.secret === '') {
    throw new OptionsError('secret', 'expected the non-empty shared secret the sender signs with.')
  }
  const plan = options.plan
  if (plan !== undefined && !checkedPlans.has(plan)) {
    checkSchemaPlan(plan)
    checkedPlans.add(plan)
  }
  let signature: string | readonly string[] | undefined
  let body: string | Uint8Array | ArrayBuffer
  try {
    signature = signatureOf(delivery.headers)
    body = delivery instanceof Request ? await delivery.arrayBuffer() : delivery.body
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  if (signature === undefined || signature === '') return { ok: false, reason: 'missing_signature' }
  if (!(await verifySignature(body, signature, options.secret))) return { ok: false, reason: 'bad_signature' }
  let payload: unknown
  try {
    payload = JSON.parse(typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body))
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  if (!isObject(payload) || !isPayload(payload)) return { ok: false, reason: 'malformed' }
  if (plan === undefined) return { ok: true, payload: payload as VerifiedPayload<Plan> }
  let check: PlanCheck
  try {
    check = checkPlanned(plan as SchemaPlan, String(payload['type']), payload)
  } catch (error) {
    // A schema that answered with a promise for this payload: refused, as the sender's call would be.
    return { ok: false, reason: 'plan_violation', issues: [{ message: (error as Error).message }] }
  }
  if (!check.ok) return { ok: false, reason: 'plan_violation', field: check.field, issues: check.issues }
  return { ok: true, payload: check.value as VerifiedPayload<Plan> }
}
