import { paint } from '../colors.js'
import { clock, escapeControl, truncate } from '../terminal.js'
import type { ReceivedRequest, SignatureCheck } from './receiver.js'

const MARKS: Record<SignatureCheck, string> = {
  verified: paint('green', '✔ verified'),
  forged: paint('red', '✘ forged  '),
  missing: paint('red', '✘ unsigned'),
  stale: paint('red', '✘ stale   '),
  unchecked: paint('dim', '· unchecked'),
}

type Fields = Record<string, unknown>

// Everything below comes from the network: each piece is escaped before it is styled.
const text = (value: unknown): string =>
  escapeControl(typeof value === 'string' ? value : (JSON.stringify(value) ?? '?'))

/** What the event says, in a few words: who did what. */
function headline(payload: Fields): string {
  const user = text(payload['userId'])
  switch (payload['type']) {
    case 'track':
      return `${paint('bold', payload['event'] === undefined ? '?' : text(JSON.stringify(payload['event'])))} by ${user}`
    case 'page':
    case 'screen':
      return `${user} viewed ${payload['name'] === undefined ? 'a page' : paint('bold', text(payload['name']))}`
    case 'group':
      return `${user} in group ${paint('bold', text(payload['groupId']))}`
    case 'alias':
      return `${text(payload['Previous ID'])} → ${paint('bold', text(payload['User ID']))}`
    default:
      return user
  }
}

/** The event's own fields (traits or properties), when it has any. */
function details(payload: Fields): string | undefined {
  const fields = payload['traits'] ?? payload['properties']
  if (typeof fields !== 'object' || fields === null || Object.keys(fields).length === 0) return undefined
  return escapeControl(JSON.stringify(fields))
}

/**
 * A received request as one or two lines: time, signature mark, event type and headline, the
 * answer when it is not 200; then the event's traits or properties, dimmed.
 */
export function formatRequest(request: ReceivedRequest, width: number): string {
  const payload =
    typeof request.payload === 'object' && request.payload !== null ? (request.payload as Fields) : undefined
  const type = text(payload ? payload['type'] : request.method)
  const parts = [
    paint('dim', clock(new Date(request.time))),
    MARKS[request.signature],
    paint('cyan', type.padEnd(8)),
    payload ? headline(payload) : paint('dim', `${escapeControl(request.path)} (not JSON)`),
  ]
  if (request.status !== 200) parts.push(paint('yellow', `→ ${request.status} ${request.reason ?? ''}`.trimEnd()))
  if (request.senderHungUp)
    parts.push(paint('yellow', '(the sender hung up first: its timeout is shorter than --delay)'))
  const first = parts.join(' ')
  const extra = payload && details(payload)
  return extra === undefined
    ? first
    : `${first}\n${' '.repeat(13)}${paint('dim', truncate(extra, Math.max(20, width - 13)))}`
}

/** Counts by signature check, for the summary line at exit. */
export function formatSummary(
  counts: Readonly<Record<SignatureCheck, number>>,
  answered: Readonly<Record<string, number>>,
): string {
  const total = Object.values(counts).reduce((sum, count) => sum + count, 0)
  const checks = (Object.keys(counts) as SignatureCheck[])
    .filter((check) => counts[check] > 0)
    .map((check) => `${counts[check]} ${check}`)
  const statuses = Object.entries(answered).map(([status, count]) => `${count}×${status}`)
  return `eventwire listen: received ${total} request(s)${checks.length ? `: ${checks.join(', ')}` : ''}${statuses.length ? `; answered ${statuses.join(', ')}` : ''}`
}
