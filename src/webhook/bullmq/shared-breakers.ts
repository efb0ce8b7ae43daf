import { UrlKeys } from './url-keys.js'

/** The commands shared breakers use: ioredis's, as BullMQ's connection has them. */
export interface BreakerStore {
  get(key: string): Promise<string | null>
  set(key: string, value: string, px: 'PX', ms: number): Promise<unknown>
  del(key: string): Promise<number>
  eval(script: string, keys: number, ...args: Array<string | number>): Promise<unknown>
}

/**
 * The probe of a cool-down, claimed only if the breaker is not open again already: a worker whose
 * reading is a second old must not probe a URL another worker's failed probe has just reopened.
 * Returns 0 (claimed), -1 (another worker probes) or the time the breaker is open until.
 */
const CLAIM = `
local opened = tonumber(redis.call('GET', KEYS[1]) or '0')
if opened > tonumber(ARGV[1]) then return opened end
if redis.call('SET', KEYS[2], '1', 'PX', ARGV[2], 'NX') then return 0 end
return -1
`

/** How often a worker reads a URL's shared breaker from Redis, at most (ms). */
export const BREAKER_REFRESH_MS = 1_000

/** What one URL's shared breaker looked like when last read. */
interface Reading {
  /** Epoch ms until which it is open; `undefined`: nobody holds it open. */
  openUntil: number | undefined
  readAt: number
  /** The read under way, if one is. */
  reading: Promise<void> | undefined
}

/** What {@link SharedBreakers.known} answers before a URL's first reading. */
export const UNREAD: unique symbol = Symbol('unread')

/**
 * The circuit breakers of every worker on a queue, in Redis: one key per URL, holding the epoch ms
 * until which it is open. A worker whose own run of failures opens a breaker writes it; every
 * worker reads it (before its first attempt to the URL, then at most once per
 * {@link BREAKER_REFRESH_MS}, without waiting for the answer) and follows it. Once the cool-down is over, the key stays while the URL is being probed:
 * one worker wins the probe with `SET NX`, so ten workers send one probe, not ten. The probe's
 * success deletes the key; its failure writes a new opening.
 */
export class SharedBreakers {
  readonly #store: () => Promise<BreakerStore>
  readonly #timeoutMs: number
  readonly #coolDownMs: number
  readonly #now: () => number
  readonly #failed: (error: Error) => void
  readonly #readings = new Map<string, Reading>()
  readonly #keys: UrlKeys

  /**
   * @param prefix - The queue's keys: `{prefix}:{name}`; breakers live under `{prefix}:{name}:breaker:`.
   * @param failed - Hears of a Redis error; a breaker that cannot be shared still works in its process.
   */
  constructor(options: {
    store: () => Promise<BreakerStore>
    prefix: string
    timeoutMs: number
    coolDownMs: number
    now: () => number
    failed: (error: Error) => void
  }) {
    this.#store = options.store
    this.#keys = new UrlKeys(`${options.prefix}:breaker:`)
    this.#timeoutMs = options.timeoutMs
    this.#coolDownMs = options.coolDownMs
    this.#now = options.now
    this.#failed = options.failed
  }

  /**
   * Until when `url`'s shared breaker is open (epoch ms); `undefined` when nobody holds it open.
   * The first time a process asks about a URL it waits for Redis's answer; later it answers from
   * the last reading, and reads again in the background when that is older than
   * {@link BREAKER_REFRESH_MS}.
   */
  async openUntil(url: string): Promise<number | undefined> {
    const known = this.known(url)
    return known === UNREAD ? this.#firstReading(url) : known
  }

  /**
   * {@link openUntil} without waiting: the last reading of `url`'s shared breaker (a read in the
   * background when it is older than {@link BREAKER_REFRESH_MS}), or {@link UNREAD} before its
   * first reading, which `openUntil` waits for.
   */
  known(url: string): number | undefined | typeof UNREAD {
    const reading = this.#readings.get(url)
    if (reading === undefined || reading.readAt === Number.NEGATIVE_INFINITY) return UNREAD
    const now = this.#now()
    if (reading.reading === undefined && now - reading.readAt >= BREAKER_REFRESH_MS) void this.#read(url, reading, now)
    return reading.openUntil
  }

  async #firstReading(url: string): Promise<number | undefined> {
    let reading = this.#readings.get(url)
    if (reading === undefined) {
      reading = { openUntil: undefined, readAt: Number.NEGATIVE_INFINITY, reading: undefined }
      this.#readings.set(url, reading)
    }
    // Never read (or the reads failed): whoever asks waits for an answer, not only the first to ask.
    await (reading.reading ?? this.#read(url, reading, this.#now()))
    return reading.openUntil
  }

  #read(url: string, reading: Reading, now: number): Promise<void> {
    reading.reading = this.#store()
      .then((store) => store.get(this.#keys.of(url)))
      .then(
        (value) => {
          const until = value === null ? undefined : Number(value)
          // Stryker disable next-line ConditionalExpression: Number.isFinite(undefined) is false too.
          reading.openUntil = until !== undefined && Number.isFinite(until) ? until : undefined
          reading.readAt = now
        },
        (error: unknown) => this.#failed(error as Error),
      )
      .finally(() => {
        reading.reading = undefined
      })
    return reading.reading
  }

  /**
   * Tells every worker that `url`'s breaker is open until `openUntil`. The key outlives the
   * cool-down by the time a few probes take, so that the URL stays held while it is probed.
   */
  open(url: string, openUntil: number): void {
    this.#remember(url, openUntil)
    const ttl = Math.max(1, openUntil - this.#now()) + this.#coolDownMs + 4 * this.#timeoutMs
    this.#store()
      .then((store) =>
        Promise.all([store.set(this.#keys.of(url), String(openUntil), 'PX', ttl), this.#endProbe(store, url)]),
      )
      .catch((error: unknown) => this.#failed(error as Error))
  }

  /** The probe is over (its answer opened or closed the breaker): the next cool-down's may be claimed. */
  #endProbe(store: BreakerStore, url: string): Promise<number> {
    return store.del(`${this.#keys.of(url)}:probe`)
  }

  /** Tells every worker that `url`'s breaker is closed. */
  close(url: string): void {
    this.#remember(url, undefined)
    this.#store()
      .then((store) => Promise.all([store.del(this.#keys.of(url)), this.#endProbe(store, url)]))
      .catch((error: unknown) => this.#failed(error as Error))
  }

  /**
   * Whether this worker may send the one probe of `url`'s cool-down: the first to ask wins, until
   * the probe's time is up, and nobody wins while another worker's failed probe has opened the
   * breaker again (`openUntil` says until when, and is remembered). Without Redis the answer is
   * yes: the process's own breaker still holds.
   */
  async claimProbe(url: string): Promise<{ claimed: boolean; openUntil?: number }> {
    try {
      const store = await this.#store()
      const key = this.#keys.of(url)
      const answer = Number(await store.eval(CLAIM, 2, key, `${key}:probe`, this.#now(), this.#timeoutMs + 1_000))
      if (answer > 0) {
        this.#remember(url, answer)
        return { claimed: false, openUntil: answer }
      }
      return { claimed: answer === 0 }
    } catch (error) {
      this.#failed(error as Error)
      return { claimed: true }
    }
  }

  #remember(url: string, openUntil: number | undefined): void {
    this.#readings.set(url, { openUntil, readAt: this.#now(), reading: undefined })
  }
}
