import type { AttemptNotice } from '../../webhook/index.js'
import type { DevActivity, DevTotals } from './activity.js'
import { RateMeter } from './rate-meter.js'

/** What the live view shows for one webhook URL. */
export interface UrlStats {
  readonly url: string
  delivered: number
  failed: number
  /** Events waiting for a retry at this URL now. */
  readonly retrying: Set<string>
  /** The last answer: an HTTP status or an error code. */
  last: string | undefined
  readonly rate: RateMeter
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Running totals of `eventwire dev`, kept from its activity records. */
export class DevStats {
  readonly totals: Mutable<DevTotals> = {
    batches: 0,
    rejected: 0,
    received: 0,
    delivered: 0,
    failed: 0,
    skipped: 0,
    unroutable: 0,
  }
  readonly receivedRate = new RateMeter()
  readonly urls: UrlStats[]
  /** The same rows by URL, for notices that name their URL. */
  readonly #byUrl: ReadonlyMap<string, UrlStats>
  lastRejection: string | undefined

  constructor(urls: readonly string[]) {
    this.urls = urls.map((url) => ({
      url,
      delivered: 0,
      failed: 0,
      retrying: new Set(),
      last: undefined,
      rate: new RateMeter(),
    }))
    this.#byUrl = new Map(this.urls.map((row) => [row.url, row]))
  }

  /** Counts a URL's deliveries as they happen: in mode `'each'` an event settles only when every URL is done. */
  recordAttempt(notice: AttemptNotice, now: number = Date.now()): void {
    const url = this.#byUrl.get(notice.url)
    if (!url) return
    if (notice.accepted) {
      url.delivered++
      url.rate.add(now)
    }
    url.last = notice.status === undefined ? notice.error?.code : String(notice.status)
  }

  record(activity: DevActivity, now: number = Date.now()): void {
    switch (activity.event) {
      case 'batch':
        this.totals.batches++
        this.totals.received += activity.messages
        for (let index = 0; index < activity.messages; index++) this.receivedRate.add(now)
        break
      case 'rejected':
        this.totals.rejected++
        this.lastRejection = `${activity.status} ${activity.code}: ${activity.reason}`
        break
      case 'unroutable':
        this.totals.unroutable++
        break
      case 'retry':
        this.#byUrl.get(activity.url)?.retrying.add(activity.eventId)
        break
      case 'delivered':
      case 'failed':
      case 'skipped':
        this.totals[activity.event]++
        activity.urls.forEach((outcome, index) => {
          const url = this.urls[index]
          if (!url) return
          url.retrying.delete(activity.eventId)
          if (outcome.status === 'failed') url.failed++
        })
        break
      default:
        break
    }
  }
}
