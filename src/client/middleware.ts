import { ValidationError } from '../core/errors/validation-error.js'
import { isThenable } from '../core/thenable.js'
import type { MessageByType, MessageType } from '../core/messages.js'
import type { NoPlan, PlannedEventName, PlannedOutput, TrackingPlan } from '../core/plan.js'

/** What a {@link Middleware} is told about the call besides its message. */
export interface MiddlewareCall {
  /** The call's type: `'track'`, `'identify'`... (the message keeps it too). */
  readonly type: MessageType
}

/**
 * Shapes a call's message before it is queued: returns it (changed in place or not), a changed
 * copy, or `null`/`undefined` to drop the call. It gets the message as it would be sent (a copy:
 * the caller's object is never changed), after the call's own checks; what it returns is checked
 * again with the same rules. Synchronous: calls are. A middleware that throws refuses the call
 * with a `ValidationError` (`ERR_MIDDLEWARE`) naming it.
 *
 * @example
 * ```ts
 * import { Client, type Middleware } from 'eventwire'
 *
 * // Drops events until the user has agreed to analytics.
 * let consented = false
 * const consent: Middleware = (message) => (consented ? message : null)
 * const client = new Client('WRITE_KEY', { middleware: [consent] })
 * client.track({ userId: 'u1', event: 'Viewed' }) // dropped: 'dropped' event, callback told so
 * consented = true
 * ```
 */
export type Middleware<Plan = NoPlan> = (
  message: MiddlewareMessage<Plan>,
  call: MiddlewareCall,
) => MiddlewareMessage<Plan> | null | undefined

/**
 * A message as it is sent: the call's fields, with `type`, `messageId` and `timestamp` (an ISO
 * 8601 string) filled in. A union on `type`: checking it narrows to that call's fields.
 */
export type SentMessage = {
  [Type in MessageType]: Omit<MessageByType[Type], 'timestamp' | 'messageId'> & {
    type: Type
    messageId: string
    timestamp: string
  }
}[MessageType]

/**
 * A message as a {@link Middleware} gets it, and as it is sent ({@link SentMessage}). Under a plan,
 * a `track`'s `event` and `properties` and the `traits` of `identify` and `group` are the plan's
 * (its schemas' outputs: what the check gave back); see {@link PlannedMiddlewareMessage}.
 */
export type MiddlewareMessage<Plan = NoPlan> = [Plan] extends [NoPlan]
  ? SentMessage
  : Plan extends TrackingPlan
    ? PlannedMiddlewareMessage<Plan>
    : SentMessage

/** {@link SentMessage} under a plan: what the plan's entries cover is typed by them. */
export type PlannedMiddlewareMessage<Plan extends TrackingPlan> =
  | (Plan extends { readonly events: object }
      ? {
          [Name in PlannedEventName<Plan>]: Omit<Extract<SentMessage, { type: 'track' }>, 'event' | 'properties'> & {
            event: Name
            properties?: PlannedOutput<NonNullable<Plan['events']>[Name & keyof NonNullable<Plan['events']>]>
          }
        }[PlannedEventName<Plan>]
      : Extract<SentMessage, { type: 'track' }>)
  | (Plan extends { readonly traits: infer Traits }
      ? Omit<Extract<SentMessage, { type: 'identify' }>, 'traits'> & { traits?: PlannedOutput<Traits> }
      : Extract<SentMessage, { type: 'identify' }>)
  | (Plan extends { readonly groupTraits: infer Traits }
      ? Omit<Extract<SentMessage, { type: 'group' }>, 'traits'> & { traits?: PlannedOutput<Traits> }
      : Extract<SentMessage, { type: 'group' }>)
  | Extract<SentMessage, { type: 'page' | 'screen' | 'alias' }>

/** What `'dropped'` listeners receive: a call that a middleware dropped. */
export interface DroppedInfo {
  readonly type: MessageType
  readonly messageId: string
  /** Which middleware dropped it: `middleware[1] (consent)`, by position and function name. */
  readonly middleware: string
}

/**
 * Runs the chain in order over a copy of the message as it would be sent; returns what the last
 * one gave, with its JSON (the same as `json` when nothing changed), or the label of the one that
 * dropped it: `middleware[1] (consent)`, by position and function name.
 *
 * @throws {@link ValidationError} `ERR_MIDDLEWARE` for a middleware that throws or returns
 * something other than a message or `null`, naming it; `cause` is what it threw.
 */
export function runMiddleware(
  chain: readonly Middleware<unknown>[],
  type: MessageType,
  json: string,
): { readonly message: unknown; readonly json: string | undefined } | { readonly droppedBy: string } {
  let message: unknown = JSON.parse(json)
  // The chain as it is now: a middleware that adds one with use() shapes the next call, not this one.
  for (const [index, middleware] of [...chain].entries()) {
    const label = `middleware[${index}]${middleware.name ? ` (${middleware.name})` : ''}`
    let wrong: string | undefined
    try {
      message = middleware(message as MiddlewareMessage<unknown>, { type })
      if (message === null || message === undefined) return { droppedBy: label }
      wrong = isThenable(message) ? 'a promise (middleware is synchronous, as calls are)' : kindOf(message)
    } catch (error) {
      throw refusal(`${type}(): ${label} threw: ${briefly(error)}`, error)
    }
    if (wrong) throw refusal(`${type}(): ${label} returned ${wrong}; expected the message, or null to drop it`)
  }
  return { message, json: jsonOf(message) }
}

function refusal(message: string, cause?: unknown) {
  return new ValidationError('ERR_MIDDLEWARE', 'message', message, cause === undefined ? undefined : { cause })
}

/**
 * What a middleware threw, in one short line: its own message only (the whole error is the
 * `cause`), so that errors of middleware that call the client again do not nest their texts, and
 * whatever was thrown (a null-prototype object, a Proxy that throws) cannot break the refusal.
 */
function briefly(error: unknown): string {
  try {
    return String(error instanceof Error ? `${error.name}: ${error.message}` : error).slice(0, 200)
  } catch {
    return 'a value that cannot be shown'
  }
}

/**
 * Why a middleware's result is not a message, or `undefined` when it is one: an object as a
 * message can be (plain, a class instance, a Proxy of one), not an array, a Date, a Map...
 */
function kindOf(value: unknown): string | undefined {
  if (typeof value !== 'object') return typeof value
  return Object.prototype.toString.call(value) === '[object Object]'
    ? undefined
    : 'an object that is not a plain message (an array, a Date, a Map...)'
}

/** The message's JSON, to tell whether the chain changed it; `undefined` when it has none (checked later). */
function jsonOf(message: unknown): string | undefined {
  try {
    return JSON.stringify(message)
  } catch {
    return undefined
  }
}
