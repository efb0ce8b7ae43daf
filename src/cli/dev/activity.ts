import type { WireMessage } from '../../index.js'
import type { DeliveryResult, RetryNotice, WebhookUrlStatus } from '../../webhook/index.js'
import type { RejectionCode } from '../ingest/batch.js'

/** One URL's part in a settled event. */
export interface UrlOutcome {
  readonly url: string
  readonly status: WebhookUrlStatus
  readonly attempts: number
  readonly lastStatus?: number
  readonly error?: string
}

/** Which event a line is about: its id, type, user and the few words that tell events apart. */
export interface EventLabel {
  readonly eventId: string
  readonly type: string
  readonly userId?: string
  /** Event name, page or screen name, group id, or `previous → user` for alias. */
  readonly label?: string
}

/** What the totals say when the server stops. */
export interface DevTotals {
  readonly batches: number
  readonly rejected: number
  readonly received: number
  readonly delivered: number
  readonly failed: number
  readonly skipped: number
  readonly unroutable: number
}

/**
 * Everything `eventwire dev` reports, one record per happening: the `--json` lines as they are,
 * the plain log lines and the live view's recent list formatted from them.
 */
export type DevActivity =
  | {
      readonly event: 'listening'
      readonly url: string
      readonly batchUrl: string
      readonly writeKey: string
      readonly webhooks: readonly string[]
      /** Browser origins that may send; `*` for any. */
      readonly corsOrigins: readonly string[]
      readonly signed: boolean
      /** The scheme requests are signed with, when `signed`. */
      readonly signature: 'x-signature' | 'standard' | 'both'
      /** The Standard Webhooks secret made up for this run (`--signature standard` without `--secret`). */
      readonly generatedSecret?: string
      readonly mode: 'any' | 'each'
    }
  | { readonly event: 'batch'; readonly messages: number; readonly bytes: number }
  /** Without webhooks: an event that arrived, with what it carries. */
  | (EventLabel & { readonly event: 'received'; readonly message: WireMessage })
  | { readonly event: 'rejected'; readonly status: number; readonly code: RejectionCode; readonly reason: string }
  | (EventLabel & {
      readonly event: 'delivered' | 'failed' | 'skipped'
      readonly attempts: number
      readonly urls: readonly UrlOutcome[]
    })
  | (EventLabel & { readonly event: 'unroutable'; readonly reason: string })
  | {
      readonly event: 'retry'
      readonly eventId: string
      readonly url: string
      readonly attempts: number
      readonly error: string
      readonly status?: number
      readonly retryAt: string
    }
  | ({ readonly event: 'stopped' } & DevTotals)

function labelOf(message: WireMessage): string | undefined {
  switch (message.type) {
    case 'track':
      return message['event'] as string
    case 'page':
    case 'screen':
      return message['name'] as string | undefined
    case 'group':
      return message['groupId'] as string
    case 'alias':
      return `${String(message['previousId'])} → ${String(message['userId'])}`
    default:
      return undefined
  }
}

/** The label of a message, for every line about it. */
export function eventLabel(message: WireMessage): EventLabel {
  // An alias's label already names both ids.
  const userId = message.type === 'alias' ? undefined : (message['userId'] ?? message['anonymousId'])
  const label = labelOf(message)
  return {
    eventId: message.messageId,
    type: message.type,
    ...(typeof userId === 'string' ? { userId } : {}),
    ...(label === undefined ? {} : { label }),
  }
}

/** An event that arrived when nothing is forwarded: its label, and the message for `--json`. */
export function receivedActivity(message: WireMessage): DevActivity {
  return { event: 'received', ...eventLabel(message), message }
}

/** A delivery result as an activity record: plain values, ready for JSON. */
export function settledActivity(message: WireMessage, result: DeliveryResult): DevActivity {
  return {
    event: result.status,
    ...eventLabel(message),
    attempts: result.attempts,
    urls: result.urls.map((url) => ({
      url: url.url,
      status: url.status,
      attempts: url.attempts,
      ...(url.lastStatus === undefined ? {} : { lastStatus: url.lastStatus }),
      ...(url.lastError === undefined ? {} : { error: url.lastError.code }),
    })),
  }
}

/** A retry notice as an activity record. */
export function retryActivity(notice: RetryNotice): DevActivity {
  return {
    event: 'retry',
    eventId: notice.eventId,
    url: notice.url,
    attempts: notice.attempts,
    error: notice.error.code,
    ...(notice.error.status === undefined ? {} : { status: notice.error.status }),
    retryAt: new Date(notice.retryAt).toISOString(),
  }
}
