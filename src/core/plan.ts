import { OptionsError } from './errors/options-error.js'
import type { CommonFields, GroupMessage, IdentifyMessage, Identity, TrackMessage } from './messages.js'
import { ValidationError } from './errors/validation-error.js'
import { PLAN_CHECKER, type PlanCheckerFactory, type PlanViolation } from './plan-checker.js'
import type { SchemaIssue, StandardSchema } from './standard-schema.js'
import { isThenable } from './thenable.js'
import { isObject } from './validate.js'

/**
 * A tracking plan: the events an app may track, each with its properties, and the traits of
 * `identify` and `group` calls. Each entry is either a type (a plan for the compiler only) or a
 * {@link StandardSchema} (checked at run time as well, see {@link definePlan}).
 *
 * @example
 * ```ts
 * import { Client } from 'eventwire'
 *
 * interface ShopPlan {
 *   events: {
 *     'Order Completed': { orderId: string; total: number; currency: 'EUR' | 'USD' }
 *     'Signed Up': { referrer?: string }
 *   }
 *   traits: { email: string; plan?: 'free' | 'pro' }
 * }
 *
 * const client = new Client<ShopPlan>('WRITE_KEY')
 * client.track({ userId: 'u1', event: 'Order Completed', properties: { orderId: 'o1', total: 42, currency: 'EUR' } })
 * // client.track({ userId: 'u1', event: 'Order Complete' }) is a compile error that names 'Order Completed'.
 * ```
 */
export interface TrackingPlan {
  /** Event names and the properties of each. */
  readonly events?: object
  /** The traits of `identify` calls. */
  readonly traits?: object
  /** The traits of `group` calls. */
  readonly groupTraits?: object
}

/** A {@link TrackingPlan} whose every entry is a schema: what the client checks at run time. */
export interface SchemaPlan extends TrackingPlan {
  readonly events?: { readonly [event: string]: StandardSchema }
  readonly traits?: StandardSchema
  readonly groupTraits?: StandardSchema
}

declare const noPlan: unique symbol
/** The plan of a client that has none: its calls take any event name and any properties, as ever. */
export interface NoPlan {
  readonly [noPlan]: true
}

/** What a plan entry stands for in a call: a schema's input type, or the type itself. */
export type PlannedInput<Entry> = Entry extends StandardSchema<infer Input, unknown> ? Input : Entry

/** What a plan entry stands for once checked: a schema's output type (what is sent), or the type itself. */
export type PlannedOutput<Entry> = Entry extends StandardSchema<unknown, infer Output> ? Output : Entry

/** The event names of a plan. */
export type PlannedEventName<Plan extends TrackingPlan> = keyof Plan['events'] & string

/** The properties type of event `Name` in `Plan`, as calls give it. */
export type PlannedProperties<Plan extends TrackingPlan, Name extends PlannedEventName<Plan>> = PlannedInput<
  NonNullable<Plan['events']>[Name & keyof NonNullable<Plan['events']>]
>

/**
 * Defines a tracking plan with schemas of any Standard Schema library, checked with TypeScript
 * and at run time: give it to `new Client(writeKey, { plan })`, whose calls then take the
 * schemas' input types, and are checked by the schemas before they are sent (see the
 * `planCheck` option). Returns the plan as given.
 *
 * @throws {@link OptionsError} for an entry that is not a Standard Schema, or a schema that
 * answers asynchronously (calls are synchronous: they cannot wait for a schema).
 * @example
 * ```ts
 * import { z } from 'zod'
 * import { Client, definePlan } from 'eventwire'
 *
 * const plan = definePlan({
 *   events: {
 *     'Order Completed': z.object({ orderId: z.string(), total: z.number().nonnegative() }),
 *   },
 *   traits: z.object({ email: z.email() }),
 * })
 * const client = new Client('WRITE_KEY', { plan })
 * client.track({ userId: 'u1', event: 'Order Completed', properties: { orderId: 'o1', total: 42 } })
 * ```
 */
export function definePlan<const Plan extends SchemaPlan>(plan: Plan): Plan {
  checkSchemaPlan(plan)
  // A copy, with its check where the client looks for it (not enumerable: out of logs and JSON).
  const defined = plan.events === undefined ? { ...plan } : { ...plan, events: { ...plan.events } }
  // The mode was checked with the client's other options.
  const factory: PlanCheckerFactory = (mode = 'refuse') =>
    mode === 'off'
      ? undefined
      : (type, message, report) => {
          const check = checkPlanned(defined, type, message)
          if (check.ok) return check.value
          if (mode === 'refuse') throw planViolationError(`${type}()`, check)
          report({ field: check.field, issues: check.issues })
          // The call as it was read: sent as given, without reading the caller's object again.
          return check.given ?? message
        }
  Object.defineProperty(defined, PLAN_CHECKER, { value: factory })
  return defined
}

function isSchema(value: unknown): value is StandardSchema {
  if (!isObject(value) && typeof value !== 'function') return false
  const standard = (value as { '~standard'?: unknown })['~standard']
  return isObject(standard) && standard['version'] === 1 && typeof standard['validate'] === 'function'
}

/** Every schema of a plan with where it sits (`events["Order Completed"]`, `traits`). */
function schemasOf(plan: Record<string, unknown>): Array<[string, unknown]> {
  const entries: Array<[string, unknown]> = []
  const events = plan['events']
  if (events !== undefined) {
    if (!isObject(events)) throw new OptionsError('plan', '`events` must be an object of event names to schemas.')
    for (const [name, schema] of Object.entries(events)) entries.push([`events[${JSON.stringify(name)}]`, schema])
  }
  for (const field of ['traits', 'groupTraits']) if (plan[field] !== undefined) entries.push([field, plan[field]])
  return entries
}

/**
 * Checks that every entry of a plan is a synchronous Standard Schema.
 *
 * @throws {@link OptionsError} naming the entry otherwise.
 */
export function checkSchemaPlan(plan: unknown): asserts plan is SchemaPlan {
  if (!isObject(plan)) throw new OptionsError('plan', 'expected an object such as { events: { ... }, traits: ... }.')
  for (const key of Object.keys(plan)) {
    if (key !== 'events' && key !== 'traits' && key !== 'groupTraits')
      throw new OptionsError('plan', `unknown entry \`${key}\`; a plan has events, traits and groupTraits.`)
  }
  for (const [where, schema] of schemasOf(plan)) {
    if (!isSchema(schema)) {
      throw new OptionsError(
        'plan',
        `${where} is not a Standard Schema (Zod 4, Valibot 1, ArkType 2...): a schema has a \`~standard\` member with version 1 and validate().`,
      )
    }
    // A schema that is asynchronous whatever it is given answers a probe with a promise. One that
    // is asynchronous only for some values (an async refinement) shows it at a call. The probe is
    // `{}`, as a call without properties gives (Zod answers a preprocess that throws on
    // `undefined` with a promise: probing with that would refuse a synchronous schema).
    let probe: unknown
    try {
      probe = schema['~standard'].validate({})
    } catch {
      // A schema that throws on nothing is not asynchronous: calls will say what it does.
    }
    if (isThenable(probe)) throw asynchronous(where)
  }
}

function asynchronous(where: string): OptionsError {
  return new OptionsError(
    'plan',
    `${where} validates asynchronously, and calls are synchronous: use the synchronous form of the schema (no async refinements or transforms; Zod also answers with a promise when a refinement or transform throws).`,
  )
}

/** `properties.items[2].price` from a schema issue's path under `field`. */
export function issuePath(field: string, issue: SchemaIssue): string {
  let path = field
  for (const segment of issue.path ?? []) {
    const key = typeof segment === 'object' ? segment.key : segment
    path += typeof key === 'number' ? `[${key}]` : `.${String(key)}`
  }
  return path
}

/** The refusal of a call (or an event) that breaks a plan; `caller` opens its message (`track()`, `deliver()`). */
export function planViolationError(caller: string, violation: PlanViolation): ValidationError {
  const why = violation.issues.map((issue) => issue.message).join('; ')
  return new ValidationError(
    'ERR_PLAN_VIOLATION',
    violation.field,
    `${caller}: ${violation.field}: ${why} (the tracking plan).`,
  )
}

/**
 * The outcome of checking one call against a plan: the value to send, or what is wrong and the
 * call as it was read (`given`: what `'report'` mode sends, so that nothing is read twice).
 */
export type PlanCheck =
  | { readonly ok: true; readonly value: unknown }
  | ({ readonly ok: false; readonly given?: unknown } & PlanViolation)

/** Checks `value` (the properties or traits of a call, `{}` when absent) with `schema`, at `field`. */
export function checkWithSchema(schema: StandardSchema, field: string, value: unknown): PlanCheck {
  const check = checkOnce(schema, field, value)
  // An absent field is `undefined` (so an optional or defaulted schema applies) or else no
  // properties at all, `{}`: the schema then names what is required.
  return value === undefined && !check.ok ? checkOnce(schema, field, {}) : check
}

function checkOnce(schema: StandardSchema, field: string, value: unknown): PlanCheck {
  const result: unknown = schema['~standard'].validate(value)
  // Asynchronous for this value only (an async refinement; Zod answers a transform or a getter
  // that throws with a promise): the call cannot wait, so the schema did not accept it.
  if (isThenable(result)) return violation(field, "the plan's schema answered asynchronously for this value")
  if (typeof result !== 'object' || result === null) return unreadable(field)
  const { issues: raw } = result as { issues?: unknown }
  if (raw === undefined) {
    return 'value' in result ? { ok: true, value: (result as { value?: unknown }).value } : unreadable(field)
  }
  const issues = readIssues(raw)
  if (issues === undefined) return unreadable(field)
  const [first] = issues
  return { ok: false, field: first ? issuePath(field, first) : field, issues }
}

function violation(field: string, message: string): PlanCheck {
  return { ok: false, field, issues: [{ message }] }
}

function unreadable(field: string): PlanCheck {
  return violation(field, "the plan's schema gave a result that is not a Standard Schema result")
}

/** Issues and path segments read from a schema's result: enough to say what is wrong, bounded. */
const MAX_ISSUES = 100
const MAX_PATH = 32

/** A schema's issues as plain values (a message string, a path of keys), or `undefined` for garbage. */
function readIssues(raw: unknown): SchemaIssue[] | undefined {
  if (!Array.isArray(raw)) return undefined
  // Libraries' issues are class instances (ArkType's), with getters: read, not copied.
  return raw.slice(0, MAX_ISSUES).map((issue: unknown) => {
    const { message, path } = (typeof issue === 'object' && issue !== null ? issue : {}) as {
      message?: unknown
      path?: unknown
    }
    const keys = Array.isArray(path)
      ? path
          .slice(0, MAX_PATH)
          .map((segment: unknown) =>
            typeof segment === 'object' && segment !== null
              ? ((segment as { key?: unknown }).key as PropertyKey)
              : (segment as PropertyKey),
          )
      : undefined
    return { message: String(message), ...(keys ? { path: keys } : {}) }
  })
}

/**
 * Whether a planned field may be left out of a call: its type has no required key, or accepts
 * `undefined` (an optional or defaulted schema).
 */
export type OptionalField<Type> = Record<never, never> extends Type ? true : undefined extends Type ? true : false

/**
 * A `track` call under a plan: one of its event names, with that event's properties (required
 * when the event has a required property). A name the plan does not have, a missing or extra
 * property, or a property of the wrong type is a compile error that names it.
 */
export type PlannedTrackMessage<Plan extends TrackingPlan> = {
  [Name in PlannedEventName<Plan>]: CommonFields & { event: Name } & (OptionalField<
      PlannedProperties<Plan, Name>
    > extends true
      ? { properties?: PlannedProperties<Plan, Name> | undefined }
      : { properties: PlannedProperties<Plan, Name> }) &
    Identity
}[PlannedEventName<Plan>]

/** What `track` takes: any event without a plan (or a plan without events), a planned one with. */
export type TrackInput<Plan, Properties extends object> = [Plan] extends [NoPlan]
  ? TrackMessage<Properties>
  : Plan extends { readonly events: object }
    ? PlannedTrackMessage<Plan>
    : TrackMessage<Properties>

/** What `identify` takes: the plan's traits when it has them. */
export type IdentifyInput<Plan, Traits extends object> = [Plan] extends [NoPlan]
  ? IdentifyMessage<Traits>
  : Plan extends { readonly traits: infer Planned }
    ? CommonFields &
        (OptionalField<PlannedInput<Planned>> extends true
          ? { traits?: PlannedInput<Planned> | undefined }
          : { traits: PlannedInput<Planned> }) &
        Identity
    : IdentifyMessage<Traits>

/** What `group` takes: the plan's group traits when it has them. */
export type GroupInput<Plan, Traits extends object> = [Plan] extends [NoPlan]
  ? GroupMessage<Traits>
  : Plan extends { readonly groupTraits: infer Planned }
    ? CommonFields & { groupId: string } & (OptionalField<PlannedInput<Planned>> extends true
          ? { traits?: PlannedInput<Planned> | undefined }
          : { traits: PlannedInput<Planned> }) &
        Identity
    : GroupMessage<Traits>

/** The schema a plan has for one call, and the field it checks. */
interface PlannedField {
  readonly schema: StandardSchema | undefined
  readonly field: 'properties' | 'traits'
}

/** A plan's own entry: never one inherited from a polluted `Object.prototype`. */
function entry<Key extends keyof SchemaPlan>(plan: SchemaPlan, key: Key): SchemaPlan[Key] | undefined {
  return Object.hasOwn(plan, key) ? plan[key] : undefined
}

function plannedField(plan: SchemaPlan, type: unknown, message: Record<string, unknown>): PlannedField | undefined {
  const events = entry(plan, 'events')
  if (type === 'track' && events !== undefined) {
    const name = message['event']
    // No event at all: the call's own rule says so (ERR_MISSING_EVENT), not the plan.
    if (name === undefined || name === '') return undefined
    const schema = typeof name === 'string' && Object.hasOwn(events, name) ? events[name] : undefined
    return { schema, field: 'properties' }
  }
  const traits = entry(plan, 'traits')
  if (type === 'identify' && traits !== undefined) return { schema: traits, field: 'traits' }
  const groupTraits = entry(plan, 'groupTraits')
  if (type === 'group' && groupTraits !== undefined) return { schema: groupTraits, field: 'traits' }
  return undefined
}

/**
 * Every field a message of any type may have, each read by name, as the client's and the webhook
 * engines' rules read them (inherited and non-enumerable ones too): the copy the plan checks and
 * that is then sent, so that what is checked is what is sent whatever the caller's getters do.
 */
const MESSAGE_FIELDS = [
  'type',
  'userId',
  'anonymousId',
  'event',
  'name',
  'category',
  'properties',
  'traits',
  'groupId',
  'previousId',
  'context',
  'integrations',
  'timestamp',
  'messageId',
] as const

function snapshotOf(message: Record<string, unknown>): Record<string, unknown> {
  const snapshot: Record<string, unknown> = {}
  for (const name of MESSAGE_FIELDS) {
    const value = message[name]
    if (value !== undefined) snapshot[name] = value
  }
  return snapshot
}

/**
 * Checks one call (or one webhook event) against a plan: a `track` event's name and properties,
 * `identify` traits, `group` traits; other types pass. `type` is the call's, or `undefined` for an
 * event's own `type` (read once with the rest). Returns the message to send: a copy of every field
 * read once, with the schema's output in place of the checked field (schemas may default or
 * normalize values), or the violation. The caller's object is never changed.
 */
export function checkPlanned(plan: SchemaPlan, type: string | undefined, message: unknown): PlanCheck {
  if (!isObject(message)) return { ok: true, value: message }
  let snapshot: Record<string, unknown>
  let planned: PlannedField | undefined
  try {
    snapshot = snapshotOf(message)
    planned = plannedField(plan, type ?? snapshot['type'], snapshot)
  } catch (error) {
    return violation('event', `reading the message threw: ${describe(error)}`)
  }
  if (planned === undefined) return { ok: true, value: snapshot }
  const given = snapshot
  if (planned.schema === undefined) {
    const name = snapshot['event']
    const names = Object.keys(entry(plan, 'events') ?? {}).map((known) => JSON.stringify(known))
    const shown = typeof name === 'string' ? JSON.stringify(name) : `a name of type ${typeof name}`
    return {
      ...violation('event', `${shown} is not an event of the plan (${names.join(', ') || 'none'})`),
      given,
    } as PlanCheck
  }
  let check: PlanCheck
  try {
    check = checkWithSchema(planned.schema, planned.field, snapshot[planned.field])
  } catch (error) {
    // A schema (a refinement, a transform) that throws is a violation it could not describe.
    check = violation(planned.field, `the plan's schema threw: ${describe(error)}`)
  }
  if (!check.ok) return { ...check, given }
  return { ok: true, value: { ...snapshot, [planned.field]: check.value } }
}

function describe(error: unknown): string {
  try {
    return error instanceof Error ? error.message : String(error)
  } catch {
    return 'an unreadable error'
  }
}
