import type { DeliveryState, TargetState } from '../round.js'
import type { WebhookErrorCode } from '../webhook-error.js'

/** A failure as Redis keeps it: code and status, without the in-memory cause. */
export interface StoredFailure {
  readonly code: WebhookErrorCode
  readonly status?: number
}

/** A URL's state as Redis keeps it, with the URL itself so dead letters describe themselves. */
export interface StoredTarget extends Omit<TargetState, 'failure'> {
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

/** What a BullMQ job carries: the event's id, its body (serialized once, by the producer) and, after the first round, its state. */
export interface WebhookJobData {
  readonly eventId: string
  readonly body: string
  readonly state?: StoredState
}

/** BullMQ job ids may not contain `:` nor look like integers; this keeps them unique per event id. */
export function jobIdOf(eventId: string): string {
  return `evt-${encodeURIComponent(eventId)}`
}

export function storeState(state: DeliveryState, urls: readonly string[]): StoredState {
  return {
    eventId: state.eventId,
    deadline: state.deadline,
    rounds: state.rounds,
    targets: state.targets.map((target, index) => ({
      url: urls[index] ?? '',
      status: target.status,
      attempts: target.attempts,
      lastStatus: target.lastStatus,
      retryAfterMs: target.retryAfterMs,
      failure: target.failure && { code: target.failure.code, ...(target.failure.status === undefined ? {} : { status: target.failure.status }) },
    })),
  }
}

export function restoreState(stored: StoredState): DeliveryState {
  return {
    eventId: stored.eventId,
    deadline: stored.deadline,
    rounds: stored.rounds,
    targets: stored.targets.map((target) => ({
      status: target.status,
      attempts: target.attempts,
      lastStatus: target.lastStatus ?? undefined,
      retryAfterMs: target.retryAfterMs ?? undefined,
      failure: target.failure ?? undefined,
    })),
  }
}
