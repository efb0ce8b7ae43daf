import { OptionsError } from '../../core/errors/options-error.js'
import type { JsonObject } from '../../core/json-value.js'
import {
  checkPlanned,
  checkSchemaPlan,
  type NoPlan,
  type PlannedEventName,
  type PlannedOutput,
  type SchemaPlan,
  type TrackingPlan,
} from '../../core/plan.js'
import type { SchemaIssue } from '../../core/standard-schema.js'
import { choiceOption, integerOption } from '../../core/option-checks.js'
import { isObject } from '../../core/validate.js'
import type { WebhookPayload } from '../event/payload.js'
import { checkableBytes, constantTimeEqual } from './signature.js'
import type { HmacFormat, Signer } from './signer.js'
import { SECRET_PREFIX, standardKey, unixSeconds, whyNotStandardSecret } from './standard-webhooks.js'
// Resolved per runtime by package.json "imports": node:crypto on Node, Web Crypto elsewhere.
import { defaultPlatform } from '#eventwire/webhook-platform'

/** Headers as a receiver has them: a `Headers`, or Node's `IncomingHttpHeaders` (lowercase names). */
export type ReceivedHeaders = Headers | { readonly [name: string]: string | readonly string[] | undefined }

/** A delivery as a receiver has it: a fetch `Request`, or its headers and the raw body bytes. */
export type ReceivedWebhook =
  | Request
  | { readonly headers: ReceivedHeaders; readonly body: string | Uint8Array | ArrayBuffer }

/** The signature schemes a receiver can check (see `WebhookSettings`). */
export type SignatureScheme = 'x-signature' | 'standard'

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions<Plan> {
  /**
   * The secret the sender signs with, or several during a rotation (a delivery signed with any
   * one of them is accepted).
   */
  secrets: string | readonly string[]
  /**
   * The signature to check: `'standard'` (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
   * `webhook-signature`, with replay protection) or `'x-signature'` (`X-Signature`, HMAC-SHA1 of
   * the body, no timestamp). A request signed with both passes only the one named here.
   * @defaultValue `'standard'` when every secret is a `whsec_` secret, else `'x-signature'`
   */
  scheme?: SignatureScheme | undefined
  /**
   * Standard Webhooks only: how far `webhook-timestamp` may lie from this machine's clock, in
   * seconds, either way. Older is a replay (or a clock far behind); newer, a clock far ahead.
   * @defaultValue 300 (5 minutes, as the specification recommends)
   */
  toleranceSeconds?: number | undefined
  /** A plan of Standard Schemas (a `definePlan`): the payload is checked by it and typed by its schemas' outputs. */
  plan?: Plan | undefined
}

/**
 * Why {@link verifyWebhook} refused a delivery. `missing_header` and `malformed_header` name the
 * header in `header`; `timestamp_too_old` and `timestamp_too_new`: signed by a holder of the
 * secret, at a time outside `toleranceSeconds` (a replay, or a skewed clock); `malformed`: the body
 * is not JSON, or not a webhook payload.
 */
export type WebhookRefusal =
  | 'missing_header'
  | 'malformed_header'
  | 'bad_signature'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'malformed'
  | 'plan_violation'

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
      /** With `missing_header` and `malformed_header`: which (lowercase). */
      readonly header?: string
      /** With `plan_violation`: the field the plan refused (`properties.total`, `event`...). */
      readonly field?: string
      /** With `plan_violation`: what the schema found. */
      readonly issues?: readonly SchemaIssue[]
    }

/** Plans already checked (a receiver passes the same plan to every call): checked once each. */
const checkedPlans = new WeakSet<object>()

/**
 * One header's value, by its lowercase name, from a `Headers` or a Node-style object: a repeated
 * header given as an array reads as Node joins it (", " between the values); what is not a string
 * is not a value. `undefined` when absent or empty.
 */
function headerOf(headers: ReceivedHeaders, name: string): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined
  let value: unknown
  if (typeof (headers as Headers).get === 'function') value = (headers as Headers).get(name)
  else {
    // Node lowercases header names; an object written by hand may not.
    const fields = headers as { readonly [name: string]: unknown }
    const key = Object.keys(fields).find((field) => field.toLowerCase() === name)
    value = key === undefined ? undefined : fields[key]
  }
  const text = Array.isArray(value)
    ? value.filter((entry): entry is string => typeof entry === 'string').join(', ')
    : typeof value === 'string'
      ? value
      : ''
  return text === '' ? undefined : text
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
 * by it: the signature over the raw bytes (read once, never re-serialized), Standard Webhooks'
 * timestamp within `toleranceSeconds`, then JSON, then the plan. Runs on Web Crypto in every
 * runtime. Never throws for what arrives: every refusal is a value with a `reason`. Under Standard
 * Webhooks, de-duplicate on `webhook-id` too: a delivery replayed within the tolerance verifies.
 *
 * @throws {@link OptionsError} (as a rejection) for missing secrets, a `scheme: 'standard'` secret
 * that is not a `whsec_` secret, a bad `toleranceSeconds`, or a plan entry that is not a
 * synchronous Standard Schema.
 * @example
 * ```ts
 * import { z } from 'zod'
 * import { definePlan } from 'eventwire'
 * import { verifyWebhook } from 'eventwire/webhook'
 *
 * const plan = definePlan({ events: { 'Order Completed': z.object({ total: z.number() }) } })
 * // Stop at start without the secret, rather than refuse every request later.
 * const secret = process.env['WEBHOOK_SECRET']
 * if (!secret) throw new Error('WEBHOOK_SECRET is not set')
 *
 * export const handle = async (request: Request): Promise<Response> => {
 *   const verified = await verifyWebhook(request, { secrets: secret, plan })
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
  const { secrets, scheme, tolerance } = checkOptions(options)
  const plan = options.plan
  if (plan !== undefined && !checkedPlans.has(plan)) {
    checkSchemaPlan(plan)
    checkedPlans.add(plan)
  }
  let headers: ReceivedHeaders
  let body: Uint8Array
  try {
    headers = delivery.headers
    // Any fetch Request (undici's own, a polyfill's, another realm's): not only this global's class.
    const raw = isRequest(delivery) ? await delivery.arrayBuffer() : delivery.body
    const bytes = checkableBytes(raw)
    if (bytes === undefined) return { ok: false, reason: 'malformed' }
    body = typeof bytes === 'string' ? encoder.encode(bytes) : bytes
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  let refusal: Refusal | undefined
  try {
    refusal =
      scheme === 'standard'
        ? await checkStandard(headers, body, secrets, tolerance)
        : await checkX(headers, body, secrets)
  } catch {
    // Headers whose reading throws (a getter, a `get` of a hand-made object): not what a sender sends.
    return { ok: false, reason: 'malformed_header' }
  }
  if (refusal !== undefined) return refusal
  let payload: unknown
  try {
    payload = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  if (!isObject(payload) || !isPayload(payload)) return { ok: false, reason: 'malformed' }
  if (plan === undefined) return { ok: true, payload: payload as VerifiedPayload<Plan> }
  const check = checkPlanned(plan as SchemaPlan, undefined, payload)
  if (!check.ok) return { ok: false, reason: 'plan_violation', field: check.field, issues: check.issues }
  return { ok: true, payload: check.value as VerifiedPayload<Plan> }
}

const encoder = new TextEncoder()

function isRequest(delivery: ReceivedWebhook): delivery is Request {
  return typeof (delivery as Request).arrayBuffer === 'function'
}

/** A refusal of {@link verifyWebhook} before the body is read as JSON. */
type Refusal = { readonly ok: false; readonly reason: WebhookRefusal; readonly header?: string }

/**
 * The options, checked: the secrets as a list, the scheme they call for, the tolerance.
 *
 * @throws {@link OptionsError} naming the option.
 */
function checkOptions(options: unknown): { secrets: readonly string[]; scheme: SignatureScheme; tolerance: number } {
  if (!isObject(options)) throw new OptionsError('options', 'expected { secrets, scheme?, toleranceSeconds?, plan? }.')
  const given = options['secrets']
  const secrets: readonly unknown[] = Array.isArray(given) ? given : given === undefined ? [] : [given]
  if (secrets.length === 0 || secrets.some((secret) => typeof secret !== 'string' || secret === '')) {
    throw new OptionsError('secrets', 'expected the non-empty secret the sender signs with, or a list of them.')
  }
  const checked = secrets as readonly string[]
  const scheme =
    choiceOption('scheme', options['scheme'], ['x-signature', 'standard']) ??
    (checked.every((secret) => secret.startsWith(SECRET_PREFIX)) ? 'standard' : 'x-signature')
  if (scheme === 'standard') {
    checked.forEach((secret, index) => {
      const why = whyNotStandardSecret(secret)
      if (why !== undefined) throw new OptionsError(checked.length > 1 ? `secrets[${index}]` : 'secrets', `${why}.`)
    })
  }
  const tolerance = integerOption('toleranceSeconds', options['toleranceSeconds'], 300, 0)
  return { secrets: checked, scheme, tolerance }
}

/** `X-Signature`: one or more hex signatures (comma-separated, or a repeated header), any one by any secret. */
async function checkX(
  headers: ReceivedHeaders,
  body: Uint8Array,
  secrets: readonly string[],
): Promise<Refusal | undefined> {
  const given = (headerOf(headers, 'x-signature') ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '')
  if (given.length === 0) return { ok: false, reason: 'missing_header', header: 'x-signature' }
  for (const secret of secrets) {
    const expected = await signerFor(secret, 'sha1-hex')(body)
    if (given.some((signature) => constantTimeEqual(expected, signature))) return undefined
  }
  return { ok: false, reason: 'bad_signature' }
}

/** Whole seconds since the epoch, as `webhook-timestamp` is written (no sign, no fraction). */
const UNIX_SECONDS = /^\d{1,12}$/

/**
 * Standard Webhooks: the three headers, a `v1` signature of `{id}.{timestamp}.{body}` by any secret,
 * then the timestamp within the tolerance (checked after the signature, so that a stale timestamp
 * is reported only for a delivery a secret holder signed).
 */
async function checkStandard(
  headers: ReceivedHeaders,
  body: Uint8Array,
  secrets: readonly string[],
  tolerance: number,
): Promise<Refusal | undefined> {
  const values: Record<string, string> = {}
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = headerOf(headers, name)
    if (value === undefined) return { ok: false, reason: 'missing_header', header: name }
    values[name] = value
  }
  const id = values['webhook-id'] as string
  const timestamp = values['webhook-timestamp'] as string
  if (!UNIX_SECONDS.test(timestamp)) return { ok: false, reason: 'malformed_header', header: 'webhook-timestamp' }
  const given = (values['webhook-signature'] as string)
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3))
  const signed = concat(encoder.encode(`${id}.${timestamp}.`), body)
  let verified = false
  for (const secret of secrets) {
    const expected = await signerFor(secret, 'sha256-base64')(signed)
    if (given.some((signature) => constantTimeEqual(expected, signature))) {
      verified = true
      break
    }
  }
  if (!verified) return { ok: false, reason: 'bad_signature' }
  const age = unixSeconds(Date.now()) - Number(timestamp)
  if (age > tolerance) return { ok: false, reason: 'timestamp_too_old' }
  if (age < -tolerance) return { ok: false, reason: 'timestamp_too_new' }
  return undefined
}

function concat(head: Uint8Array, tail: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(head.length + tail.length)
  bytes.set(head)
  bytes.set(tail, head.length)
  return bytes
}

/**
 * Signers by format and secret: a receiver verifies every delivery with the same few secrets, and
 * preparing a key is a good part of the cost. The platform's: node:crypto on Node (synchronous,
 * several times cheaper per delivery than a Web Crypto round trip), Web Crypto elsewhere. Bounded:
 * the oldest goes when a 33rd arrives.
 */
const signers = new Map<string, Signer>()
const MAX_SIGNERS = 32

function signerFor(secret: string, format: HmacFormat): Signer {
  const name = `${format} ${secret}`
  let signer = signers.get(name)
  if (signer === undefined) {
    signer = defaultPlatform.signer(format, format === 'sha256-base64' ? standardKey(secret) : secret)
    if (signers.size >= MAX_SIGNERS) signers.delete(signers.keys().next().value as string)
    signers.set(name, signer)
  }
  return signer
}
