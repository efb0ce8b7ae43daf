import type { Endpoint } from '../network/endpoint.js'
import type { DeliveryState, TargetState } from '../delivery/state.js'
import type { WebhookErrorCode } from '../delivery/webhook-error.js'
import { whyNotDestinationId } from '../delivery/destination-record.js'
import { causeText } from '../delivery/failure.js'

/**
 * A failure as Redis keeps it: code and status, without the in-memory cause; for
 * `ERR_CIRCUIT_OPEN`, the failure that opened the breaker, as one line (`cause`).
 */
export interface StoredFailure {
  readonly code: WebhookErrorCode
  readonly status?: number
  /** With `ERR_CIRCUIT_OPEN`: what the URL failed with, e.g. `https://… answered HTTP 503.` */
  readonly cause?: string
}

/** A URL's state as Redis keeps it, with the URL itself so dead letters describe themselves. */
export interface StoredTarget extends Omit<TargetState, 'endpoint' | 'failure'> {
  readonly url: string
  readonly failure: StoredFailure | undefined
}

/** A delivery state as Redis keeps it (JSON). */
export interface StoredState {
  readonly eventId: string
  readonly deadline: number
  readonly rounds: number
  readonly targets: readonly StoredTarget[]
}

/**
 * What a BullMQ job carries: the event's id, its body (serialized once, by the producer) and, after
 * the first round, its state. `dedupWindowMs` only when its producer's is not the default: how long
 * its id is remembered once delivered (the worker writes that memory, timed by Redis's expiry).
 * `stalls`, once a run of it did not finish: how many such runs the worker that stored the state
 * had seen, so that the next run after another one is told (see `WebhookWorker`'s `'repeated'`).
 */
export interface WebhookJobData {
  readonly eventId: string
  readonly body: string
  /** The id of the registry's destination it goes to; none for the worker's own `webhooks`. */
  readonly destination?: string
  readonly dedupWindowMs?: number
  /** Stored again by `replay()`: not kept again once delivered (a replay must not push older events out of what is kept). */
  readonly replayed?: true
  readonly state?: StoredState
  readonly stalls?: number
}

/** The job data without its state: what every round starts from, and what a re-drive stores again. */
export function freshData(data: WebhookJobData): WebhookJobData {
  return {
    eventId: data.eventId,
    body: data.body,
    ...(data.destination === undefined ? {} : { destination: data.destination }),
    ...(data.dedupWindowMs === undefined ? {} : { dedupWindowMs: data.dedupWindowMs }),
    ...(data.replayed === true ? { replayed: true } : {}),
  }
}

/**
 * BullMQ job ids may not contain `:` nor look like integers; this keeps them unique per event id
 * and destination: `evt-<id>` for the worker's own URLs, `dst-<destination>/<id>` for one of the
 * registry's (a destination id has no `/`, and the event id's is escaped), so the same event id
 * sent to two destinations is two jobs.
 */
export function jobIdOf(eventId: string, destination?: string): string {
  return destination === undefined
    ? `evt-${encodeURIComponent(eventId)}`
    : `dst-${destination}/${encodeURIComponent(eventId)}`
}

/** A state as Redis keeps it: each URL's entry names its URL, and keeps its failure's code and status only. */
export function storeState(state: DeliveryState<Endpoint>): StoredState {
  return {
    eventId: state.eventId,
    deadline: state.deadline,
    rounds: state.rounds,
    targets: state.targets.map((target) => ({
      url: target.endpoint.url,
      status: target.status,
      attempts: target.attempts,
      lastStatus: target.lastStatus,
      retryAfterMs: target.retryAfterMs,
      ...(target.dueAt === undefined ? {} : { dueAt: target.dueAt }),
      ...(target.held === undefined ? {} : { held: target.held }),
      failure: target.failure && {
        code: target.failure.code,
        ...(target.failure.status === undefined ? {} : { status: target.failure.status }),
        ...(target.failure.code === 'ERR_CIRCUIT_OPEN' && target.failure.cause !== undefined
          ? { cause: causeText(target.failure.cause) }
          : {}),
      },
    })),
  }
}

/**
 * A stored state on this worker's URLs, matched by URL, never by position: workers of two
 * versions of a URL list run side by side during a rolling deploy, and each must go on where the
 * other left off.
 *
 * - A URL of the worker's list that the state names goes on from its stored numbers (the k-th of
 *   a URL listed twice takes the k-th stored entry of that URL).
 * - A URL the state does not name (added to the list) starts fresh, within the event's window.
 * - A stored URL the worker no longer lists (removed) is not sent to again: still pending, it ends
 *   `'superseded'`; delivered or failed, it keeps its outcome. `retired(url)` gives it an endpoint
 *   to be reported with.
 * - A URL the worker lists that another worker left `'superseded'` (one without it in its list)
 *   is pending again here, from its stored numbers.
 */
export function restoreState(
  stored: StoredState,
  endpoints: readonly Endpoint[],
  retired: (url: string) => Endpoint,
): DeliveryState<Endpoint> {
  const byUrl = new Map<string, StoredTarget[]>()
  for (const target of stored.targets) {
    const same = byUrl.get(target.url)
    if (same === undefined) byUrl.set(target.url, [target])
    else same.push(target)
  }
  const targets: TargetState<Endpoint>[] = endpoints.map((endpoint) => {
    const target = byUrl.get(endpoint.url)?.shift()
    if (target === undefined) return freshTarget(endpoint)
    const restored = restoredTarget(target, endpoint)
    // Superseded by a worker that does not list it (the other version of a rolling deploy): this
    // worker lists it, so it is still to be delivered here.
    if (restored.status === 'superseded') restored.status = 'pending'
    return restored
  })
  for (const removed of byUrl.values()) {
    for (const target of removed) {
      const restored = restoredTarget(target, retired(target.url))
      if (restored.status === 'pending') restored.status = 'superseded'
      targets.push(restored)
    }
  }
  return { eventId: stored.eventId, deadline: stored.deadline, rounds: stored.rounds, targets }
}

/**
 * A dead letter run again (`redrive()`, a dashboard's Retry) starts afresh, with a new window, but
 * a URL that took the event stays delivered: in mode 'each' the others failed, and the one that
 * answered 2xx is not sent the event twice. Matched by URL (the k-th of a URL listed twice by the
 * k-th stored); a URL no longer listed is left out, as in any round.
 */
export function keepDelivered(
  fresh: DeliveryState<Endpoint>,
  stored: StoredState | undefined,
): DeliveryState<Endpoint> {
  const delivered = new Map<string, number>()
  for (const target of stored?.targets ?? [])
    if (target.status === 'delivered') delivered.set(target.url, (delivered.get(target.url) ?? 0) + 1)
  for (const target of fresh.targets) {
    const left = delivered.get(target.endpoint.url) ?? 0
    if (left === 0) continue
    target.status = 'delivered'
    delivered.set(target.endpoint.url, left - 1)
  }
  return fresh
}

function restoredTarget(target: StoredTarget, endpoint: Endpoint): TargetState<Endpoint> {
  return {
    endpoint,
    status: target.status,
    attempts: target.attempts,
    lastStatus: target.lastStatus ?? undefined,
    retryAfterMs: target.retryAfterMs ?? undefined,
    failure: target.failure ?? undefined,
    ...(typeof target.dueAt === 'number' && Number.isFinite(target.dueAt) ? { dueAt: target.dueAt } : {}),
    ...(target.held === 'breaker' || target.held === 'slots' ? { held: target.held } : {}),
  }
}

function freshTarget(endpoint: Endpoint): TargetState<Endpoint> {
  return {
    endpoint,
    status: 'pending',
    attempts: 0,
    lastStatus: undefined,
    retryAfterMs: undefined,
    failure: undefined,
  }
}

const STATUSES: ReadonlySet<unknown> = new Set(['pending', 'delivered', 'failed', 'superseded', 'skipped'])
const isCount = (value: unknown): boolean => typeof value === 'number' && Number.isInteger(value) && value >= 0

function isStoredTarget(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  const target = value as Record<string, unknown>
  return typeof target['url'] === 'string' && STATUSES.has(target['status']) && isCount(target['attempts'])
}

function stateProblem(state: unknown, eventId: string): string | undefined {
  if (state === undefined) return undefined
  if (typeof state !== 'object' || state === null) return 'its `state` is not an object'
  const stored = state as Record<string, unknown>
  if (stored['eventId'] !== eventId) return 'its `state.eventId` is not its `eventId`'
  if (typeof stored['deadline'] !== 'number' || !Number.isFinite(stored['deadline']))
    return 'its `state.deadline` is not a time'
  if (!isCount(stored['rounds'])) return 'its `state.rounds` is not a count'
  const targets = stored['targets']
  if (!Array.isArray(targets) || !targets.every(isStoredTarget)) return 'its `state.targets` are not URL states'
  return undefined
}

/**
 * What is wrong with a job's data, or `undefined` when it is an eventwire job: its event id must
 * be the one its BullMQ id was made from, its body a string, its state (if any) well formed.
 * Anything with Redis access can write a job, so the worker reads nothing it has not checked.
 */
export function jobDataProblem(jobId: string | undefined, data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'its data is not a JSON object'
  const fields = data as Record<string, unknown>
  const eventId = fields['eventId']
  if (typeof eventId !== 'string' || eventId === '') return 'its `eventId` is not a non-empty string'
  const destination = fields['destination']
  if (destination !== undefined && whyNotDestinationId(destination) !== undefined)
    return 'its `destination` is not a destination id'
  if (jobIdOf(eventId, destination as string | undefined) !== jobId)
    return `its \`eventId\` and \`destination\` do not match its job id ${JSON.stringify(jobId)}`
  if (typeof fields['body'] !== 'string') return 'its `body` is not a string'
  if (fields['dedupWindowMs'] !== undefined && !isCount(fields['dedupWindowMs']))
    return 'its `dedupWindowMs` is not a count of ms'
  if (fields['stalls'] !== undefined && !isCount(fields['stalls'])) return 'its `stalls` is not a count'
  return stateProblem(fields['state'], eventId)
}

/** The event id a job id was made from (see {@link jobIdOf}), or `undefined` for a job id eventwire did not make. */
export function eventIdOfJob(jobId: string | undefined): string | undefined {
  if (jobId === undefined) return undefined
  const at = jobId.startsWith('evt-') ? 4 : jobId.startsWith('dst-') ? jobId.indexOf('/') + 1 : 0
  if (at === 0) return undefined
  try {
    return decodeURIComponent(jobId.slice(at))
  } catch {
    return undefined
  }
}

/** The destination a job id names (see {@link jobIdOf}), or `undefined` for one of the worker's own URLs. */
export function destinationOfJob(jobId: string | undefined): string | undefined {
  if (jobId === undefined || !jobId.startsWith('dst-')) return undefined
  const slash = jobId.indexOf('/')
  return slash < 0 ? undefined : jobId.slice(4, slash)
}
