import { paint } from '../colors.js'
import { escapeControl, truncate } from '../terminal.js'
import type { DevActivity } from './activity.js'
import { formatActivity, formatBanner } from './format.js'
import { InPlaceOutput } from './in-place.js'
import type { DevStats } from './stats.js'

/** Lines of recent activity under the table. */
const RECENT_LINES = 8
/** Redraws per second: enough to look live, cheap at any event rate (one timer in all). */
const REDRAW_MS = 250

const COLUMNS = ['delivered', 'retrying', 'failed', 'rate/s', 'last'] as const
const COLUMN_WIDTH = 10

function row(url: string, cells: readonly string[], urlWidth: number): string {
  return `${truncate(url, urlWidth).padEnd(urlWidth)} ${cells.map((cell) => cell.padStart(COLUMN_WIDTH)).join(' ')}`
}

/** One frame of the live view: banner, totals, a row per webhook URL, recent activity. */
export function renderDashboard(
  stats: DevStats,
  banner: string,
  recent: readonly string[],
  width: number,
  now: number = Date.now(),
): string {
  const { totals } = stats
  const urlWidth = Math.max(
    20,
    Math.min(Math.max(...stats.urls.map((url) => url.url.length)), width - (COLUMN_WIDTH + 1) * COLUMNS.length - 1),
  )
  const lines = [
    banner,
    '',
    `received ${paint('bold', String(totals.received))} event(s) in ${totals.batches} batch(es), ${stats.receivedRate.perSecond(now).toFixed(1)}/s · ` +
      `refused ${totals.rejected} · skipped ${totals.skipped} · not forwarded ${totals.unroutable}`,
    '',
    paint('dim', row('webhook', COLUMNS, urlWidth)),
    ...stats.urls.map((url) =>
      row(
        url.url,
        [
          String(url.delivered),
          String(url.retrying.size),
          String(url.failed),
          url.rate.perSecond(now).toFixed(1),
          url.last ?? '-',
        ],
        urlWidth,
      ),
    ),
    '',
    paint('dim', 'recent'),
    ...(recent.length > 0 ? recent : [paint('dim', '  waiting for the first batch')]),
  ]
  if (stats.lastRejection !== undefined)
    lines.push('', paint('red', `last refused: ${truncate(escapeControl(stats.lastRejection), width - 14)}`))
  return lines.join('\n')
}

/**
 * The live view of `eventwire dev` on a terminal: the dashboard redrawn in place four times a
 * second, with the latest activity lines under it.
 */
export class LiveView {
  readonly #stats: DevStats
  readonly #stream: NodeJS.WriteStream
  readonly #output: InPlaceOutput
  readonly #recent: string[] = []
  #banner = ''
  #timer: NodeJS.Timeout | undefined

  constructor(stats: DevStats, stream: NodeJS.WriteStream) {
    this.#stats = stats
    this.#stream = stream
    this.#output = new InPlaceOutput(stream)
  }

  show(activity: DevActivity): void {
    if (activity.event === 'listening') {
      this.#banner = formatBanner(activity)
      this.#render()
      this.#timer = setInterval(() => this.#render(), REDRAW_MS)
      return
    }
    if (activity.event === 'stopped') {
      this.stop()
      this.#stream.write(`${formatActivity(activity)}\n`)
      return
    }
    this.#recent.push(formatActivity(activity))
    if (this.#recent.length > RECENT_LINES) this.#recent.shift()
  }

  /** Draws the last frame and leaves it on screen. */
  stop(): void {
    if (this.#timer === undefined) return
    clearInterval(this.#timer)
    this.#timer = undefined
    this.#render()
  }

  #render(): void {
    this.#output.draw(renderDashboard(this.#stats, this.#banner, this.#recent, this.#stream.columns ?? 100))
  }
}
