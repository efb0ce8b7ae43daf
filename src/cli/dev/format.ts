import { paint } from '../colors.js'
import type { WireMessage } from '../../index.js'
import { clock, escapeControl, truncate } from '../terminal.js'
import type { DevActivity, EventLabel, UrlOutcome } from './activity.js'

/** Characters of a received event's properties or traits shown on its line. */
const RECEIVED_DATA_CHARS = 120

// Labels, user ids, event ids and refusal reasons come from the network: escaped before styled.
function describe(event: EventLabel): string {
  const label =
    event.label === undefined
      ? ''
      : ` ${paint('bold', escapeControl(event.type === 'track' ? JSON.stringify(event.label) : event.label))}`
  return `${paint('cyan', escapeControl(event.type))}${label}${event.userId === undefined ? '' : paint('dim', ` (${escapeControl(event.userId)})`)}`
}

function outcome(url: UrlOutcome): string {
  // A status says enough on its own; an error code adds what happened after it (ERR_CLOSED...).
  const answer = [url.lastStatus, url.error === 'ERR_HTTP_STATUS' ? undefined : url.error]
    .filter((part) => part !== undefined)
    .join(' ')
  const detail = url.status === 'superseded' || url.status === 'skipped' ? url.status : answer
  return `${url.url} ${detail}${url.attempts > 1 ? ` after ${url.attempts} attempts` : ''}`
}

const SCHEMES = {
  'x-signature': 'X-Signature',
  standard: 'Standard Webhooks',
  both: 'X-Signature and Standard Webhooks',
}

/** How webhook requests are signed, for the banner; a made-up secret is shown, since receivers need it. */
function signedWith(activity: Extract<DevActivity, { event: 'listening' }>): string {
  if (!activity.signed) return 'unsigned: no --secret'
  const scheme = SCHEMES[activity.signature]
  return activity.generatedSecret === undefined
    ? `signed with the given secret (${scheme})`
    : `signed (${scheme}) with a new secret: ${paint('bold', activity.generatedSecret)}`
}

/** The start banner: where to send, with which key, and where events go. */
export function formatBanner(activity: Extract<DevActivity, { event: 'listening' }>): string {
  const origins = activity.corsOrigins.includes('*')
    ? 'pages of any origin (--cors-origin to restrict)'
    : activity.corsOrigins.join(', ')
  return [
    `eventwire dev: ingest API on ${paint('bold', activity.batchUrl)}`,
    `  write key  ${paint('bold', activity.writeKey)}  (eventwire send --write-key, or EVENTWIRE_WRITE_KEY)`,
    `  browsers   ${origins}`,
    ...(activity.webhooks.length === 0
      ? [`  webhooks   none: each event is shown as it arrives (--webhook URL forwards them); Ctrl+C stops`]
      : [
          `  webhooks   ${activity.webhooks.join(', ')}`,
          `             ${signedWith(activity)}; mode ${activity.mode}; Ctrl+C stops`,
        ]),
  ].join('\n')
}

/** What a received event carries, on one line: its properties or traits as compact JSON, cut short. */
function carried(message: WireMessage): string {
  const data = message['properties'] ?? message['traits']
  if (data === undefined) return ''
  return ` ${paint('dim', truncate(escapeControl(JSON.stringify(data)), RECEIVED_DATA_CHARS))}`
}

/** One activity record as one plain log line (the banner and summary as a few). */
export function formatActivity(activity: DevActivity, now: Date = new Date()): string {
  const time = paint('dim', clock(now))
  switch (activity.event) {
    case 'listening':
      return formatBanner(activity)
    case 'batch':
      return `${time} ${paint('blue', '←')} batch of ${activity.messages} event(s), ${activity.bytes} bytes`
    case 'received':
      return `${time} ${paint('blue', '·')} ${describe(activity)}${carried(activity.message)}`
    case 'rejected':
      return `${time} ${paint('red', '✘')} refused ${activity.status} ${activity.code}: ${escapeControl(activity.reason)}`
    case 'delivered':
      return `${time} ${paint('green', '✔')} ${describe(activity)} delivered: ${activity.urls.map(outcome).join('; ')}`
    case 'failed':
      return `${time} ${paint('red', '✘')} ${describe(activity)} failed: ${activity.urls.map(outcome).join('; ')}`
    case 'skipped':
      return `${time} ${paint('dim', '·')} ${describe(activity)} skipped: its integrations turn Webhooks off`
    case 'unroutable':
      return `${time} ${paint('yellow', '·')} ${describe(activity)} not forwarded: ${escapeControl(activity.reason)}`
    case 'retry': {
      const seconds = Math.max(0, (Date.parse(activity.retryAt) - now.getTime()) / 1000)
      return `${time} ${paint('yellow', '↻')} ${escapeControl(activity.eventId)} → ${activity.url} ${activity.status ?? activity.error} (attempt ${activity.attempts}); retry in ${seconds.toFixed(1)} s`
    }
    case 'stopped':
      return formatTotals(activity)
  }
}

/** The exit summary. */
function formatTotals(totals: Omit<Extract<DevActivity, { event: 'stopped' }>, 'event'>): string {
  return (
    `eventwire dev: ${totals.received} event(s) received in ${totals.batches} batch(es), ${totals.rejected} request(s) refused; ` +
    `${totals.delivered} delivered, ${totals.failed} failed, ${totals.skipped} skipped, ${totals.unroutable} not forwarded`
  )
}
