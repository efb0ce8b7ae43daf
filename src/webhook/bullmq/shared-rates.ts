import type { RateSchedule } from '../delivery/url-policy.js'
import { UrlKeys } from './url-keys.js'
import { REDIS_NOW } from './redis-now.js'
import { evalCached, type ScriptStore } from './cached-script.js'

/** What shared rates use: ioredis's scripts, as BullMQ's connection runs them. */
export type RateStore = ScriptStore

/**
 * One delivery to a URL, if its rate allows it now: the generic cell rate algorithm, equivalent to
 * a token bucket holding one second's worth of deliveries. The key holds when the next delivery
 * would be due without a burst (`tat`), on Redis's own clock (TIME), so that workers whose clocks
 * differ share one schedule. Returns 0 (taken) or how many ms until one may go (nothing taken).
 */
const TAKE = `${REDIS_NOW}
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '') or 0
-- What this script writes is never more than a burst and an interval ahead: anything else (not a
-- number, NaN, infinite, far off) was written by something else, and the schedule starts again.
if tat ~= tat or tat > now + tolerance + 2 * interval then tat = now end
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait > 0 then return math.ceil(wait) end
local next = tat + interval
redis.call('SET', KEYS[1], string.format('%.3f', next), 'PX', math.ceil(next - now) + 1000)
return 0
`

/**
 * `ratePerUrl` for every worker of a queue together: one schedule per URL in Redis, so that N
 * workers send at most the rate between them, not N times it. One round trip per attempt, and
 * only with `ratePerUrl` set.
 */
export class SharedRates implements RateSchedule {
  readonly #store: () => Promise<RateStore>
  readonly #interval: number
  readonly #tolerance: number
  readonly #keys: UrlKeys
  readonly #failed: (error: Error) => void

  /**
   * @param prefix - The queue's keys: `{prefix}:{name}`; rates live under `{prefix}:{name}:rate:`.
   * @param perSecond - Deliveries a second to one URL, in bursts of up to one second's worth.
   */
  constructor(options: {
    store: () => Promise<RateStore>
    prefix: string
    perSecond: number
    failed: (error: Error) => void
  }) {
    this.#store = options.store
    this.#failed = options.failed
    this.#keys = new UrlKeys(`${options.prefix}:rate:`)
    this.#interval = 1000 / options.perSecond
    this.#tolerance = (Math.max(1, options.perSecond) - 1) * this.#interval
  }

  /** ms between deliveries to one URL at the rate. */
  get interval(): number {
    return this.#interval
  }

  /**
   * Takes one delivery to `url` if its rate allows it now (0), else says how many ms until one may
   * go. When Redis cannot say, the delivery goes: Redis's error is reported, and a job that cannot
   * reach Redis cannot be moved either. Redis's clock times it, whatever this worker's says.
   */
  async take(url: string): Promise<number> {
    try {
      const store = await this.#store()
      const wait = await evalCached(store, TAKE, 1, this.#keys.of(url), this.#interval, this.#tolerance)
      // Stryker disable next-line ConditionalExpression,EqualityOperator: TAKE answers 0 or a wait above 0.
      return typeof wait === 'number' && wait > 0 ? wait : 0
    } catch (error) {
      this.#failed(error as Error)
      return 0
    }
  }
}
