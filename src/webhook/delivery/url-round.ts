import {
  isDelivered,
  nextAttempt,
  recordAttempt,
  WINDOW_GRACE_MS,
  type DeliveryState,
  type RoundDecision,
  type RoundRules,
  type TargetState,
} from './state.js'
import type { WebhookResponse } from '../network/transport.js'
import type { Permit } from './url-policy.js'

/**
 * What a round may do about one URL now: send (`'attempt'`, or `'probe'` for the one attempt an
 * open breaker lets through), then hand the answer back with `answered` (`heard: false` when the
 * event had ended meanwhile and the answer means nothing), or give the permit back unsent with
 * `unused`; or leave the URL for later (`'wait'`, until `until` on the round's clock; `breaker`
 * when its breaker holds it rather than its slots or its rate).
 */
export type Admission =
  | {
      readonly kind: Permit
      readonly answered: (response: WebhookResponse, heard: boolean) => void
      readonly unused: () => void
    }
  | {
      readonly kind: 'wait'
      readonly until: number
      readonly breaker: boolean
      /**
       * With `breaker`, the failure that opened it, where known: what the URL is said to have failed
       * with (`cause`, and `status` for a status) if the event's window ends while it holds.
       */
      readonly openedBy?: { readonly status?: number | undefined; readonly cause: unknown } | undefined
    }

/**
 * One pass over an event's URLs, each on its own timeline (a worker's round): every URL due now
 * (`dueAt` passed or unset) is sent to if its lane admits it, else left for when the lane says;
 * a URL that fails waits for its own backoff, counted in its own attempts. The event's window
 * still bounds them all. Finished when nothing is pending, or in mode `'any'` at the first 2xx
 * (attempts still out are aborted, the other URLs superseded); else a retry at the earliest
 * `dueAt` of the URLs still pending.
 *
 * `answered` hears of each attempt as its answer is recorded, not at the round's end.
 *
 * A URL whose window ends while its breaker is open fails with `ERR_CIRCUIT_OPEN`, its cause the
 * failure that opened the breaker where the lanes know it (else the URL's last failure); one whose
 * window ends while its slots are taken keeps its last failure, or fails with `ERR_BACKLOG_FULL`
 * when it was never tried.
 */
export async function runUrlRound<E>(
  state: DeliveryState<E>,
  rules: RoundRules,
  admit: (target: TargetState<E>) => Admission | Promise<Admission>,
  send: (endpoint: E, signal: AbortSignal | undefined) => Promise<WebhookResponse>,
  answered?: (target: TargetState<E>) => void,
): Promise<RoundDecision> {
  state.rounds++
  const start = rules.now()
  const due = state.targets.filter((target) => target.status === 'pending' && (target.dueAt ?? 0) <= start)
  // A round that starts more than a grace after the window's end (its job waited while no worker
  // ran) sends nothing: each due URL still asks its lane, to say what held it, and ends below.
  const spent = start > state.deadline + WINDOW_GRACE_MS
  // Only where a 2xx can leave other attempts to cut short: most rounds send to one URL, and an
  // abort signal per round (with the DOMException it throws) was most of a worker's overhead.
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: a signal nothing can abort (mode 'each', one URL due) is never aborted.
  const unwanted = rules.mode === 'any' && due.length > 1 ? new AbortController() : undefined
  /** The event has ended at a 2xx (mode 'any'): what is still out changes nothing. */
  let ended = false
  /** What opened the breaker of each URL held by one, where the lanes know it. */
  let openedBy: Map<TargetState<E>, NonNullable<(Admission & { kind: 'wait' })['openedBy']>> | undefined
  let inFlight = 0
  await Promise.all(
    due.map(async (target) => {
      const admitted = admit(target)
      // Admitted at once (a free slot): no turn of the microtask queue for it.
      const admission = admitted instanceof Promise ? await admitted : admitted
      if (ended || (spent && admission.kind !== 'wait')) {
        if (admission.kind !== 'wait') admission.unused()
        return
      }
      if (admission.kind === 'wait') {
        target.dueAt = Math.min(admission.until, state.deadline)
        target.held = admission.breaker ? 'breaker' : 'slots'
        if (admission.openedBy !== undefined) {
          openedBy ??= new Map()
          openedBy.set(target, admission.openedBy)
        }
        return
      }
      target.held = undefined
      target.attempts++
      inFlight++
      const response = await send(target.endpoint, unwanted?.signal)
      // Stryker disable next-line UpdateOperator: the count only spares an abort when nothing is out, which aborts nothing.
      inFlight--
      // Aborted by us, not failed by the receiver: the breaker hears nothing against the URL.
      admission.answered(response, !ended)
      // The event has ended at another URL's 2xx: this answer changes nothing.
      if (ended) return
      // Date.now(): a Retry-After date is a wall-clock date; what comes out is a duration.
      recordAttempt(target, response, Date.now())
      // Told as it is answered: a slow URL of the same event does not hold back the others' news.
      answered?.(target)
      if (rules.mode === 'any' && target.status === 'delivered') {
        ended = true
        // Stryker disable next-line ConditionalExpression,EqualityOperator: an abort when nothing is out aborts nothing.
        if (inFlight > 0) unwanted?.abort()
        return
      }
      if (target.status !== 'pending') return
      // Unset once the URL ends, failed: nothing is due for it any more.
      target.dueAt = nextAttempt(target, rules.backoff, rules.now(), state.deadline)
    }),
  )
  const pending = state.targets.filter((target) => target.status === 'pending')
  if (pending.length === 0 || (rules.mode === 'any' && state.targets.some((target) => target.status === 'delivered'))) {
    for (const target of pending) target.status = 'superseded'
    return { kind: 'finished', delivered: isDelivered(state, rules.mode) }
  }
  if (rules.now() >= state.deadline) {
    // The window is spent: each URL keeps its last failure, or says what kept it from being tried.
    for (const target of pending) {
      target.status = 'failed'
      const last = target.failure
      if (target.held === 'breaker') {
        // What opened the breaker says why the URL is held; else the URL's last failure here.
        const why = openedBy?.get(target) ?? last
        const status = why?.status === undefined ? {} : { status: why.status }
        target.failure = { code: 'ERR_CIRCUIT_OPEN', cause: why?.cause, ...status }
      } else if (
        // Stryker disable next-line ConditionalExpression: a URL never tried was held (a due URL is sent to or held), by its slots if not its breaker.
        target.held === 'slots' &&
        last === undefined
      )
        target.failure = { code: 'ERR_BACKLOG_FULL' }
    }
    return { kind: 'finished', delivered: isDelivered(state, rules.mode) }
  }
  let dueAt = state.deadline
  for (const target of pending) dueAt = Math.min(dueAt, target.dueAt ?? start)
  return { kind: 'retry', dueAt }
}
