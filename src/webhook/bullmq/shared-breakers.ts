import { SweptMap } from '../../core/swept-map.js'
import { MAX_TIMER_MS } from '../../core/timers.js'
import { UNREAD, type SharedCircuit } from '../delivery/url-policy.js'
import { causeText, MAX_CAUSE_TEXT, type AttemptFailure } from '../delivery/failure.js'
import type { WebhookErrorCode } from '../delivery/webhook-error.js'
import { UrlKeys } from './url-keys.js'
import { REDIS_NOW } from './redis-now.js'
import { evalCached, type ScriptStore } from './cached-script.js'

/** What shared breakers use: ioredis's scripts, as BullMQ's connection runs them. */
export type BreakerStore = ScriptStore

// Every script reads the time from Redis (TIME): one clock for every worker, so that a worker
// whose own clock is minutes off neither holds a URL for minutes nor lets it go early. What a
// worker gets back is a duration, which it counts on its own clock from the moment of the answer.

/**
 * How far from Redis's now an opening this engine writes can be, at most: a cool-down is at most
 * the longest timer, and a key outlives its cool-down by less than that again. A key further off
 * (NaN, infinite, a number Redis cannot hold) was written by something else with Redis access.
 */
const SANE_MS = 2 * MAX_TIMER_MS

/** Whether `opened` is such an opening, in the scripts below. */
const SANE = `(opened == opened and opened <= now + ${SANE_MS} and opened >= now - ${SANE_MS})`

/**
 * A breaker's key holds until when it is open, on Redis's clock, then (after a space, when known)
 * the failure that opened it as JSON. Here the opening and the failure are taken apart.
 */
const PARSE = `
local value = redis.call('GET', KEYS[1])
local opened, openedBy = nil, ''
if value then
  local head, rest = string.match(value, '^(%S*) ?(.*)$')
  opened = tonumber(head or '')
  openedBy = rest or ''
end
`

/**
 * A new version of the index of open breakers: a count of its changes, then Redis's time. The
 * time makes it new even when Redis restarted without its last writes and counts the same number
 * again; the count, when two changes come within a millisecond.
 */
const BUMP = `
local function bump(key)
  local count = tonumber(string.match(redis.call('GET', key) or '', '^(%d+)')) or 0
  redis.call('SET', key, (count + 1) .. ':' .. now)
end
`

/**
 * Opens the breaker for ARGV[1] ms: KEYS[1] holds until when, on Redis's clock, and what opened
 * it (ARGV[3], '' when unknown), and lives ARGV[2] ms longer, so that the URL stays held while it
 * is probed; the probe of the cool-down before (KEYS[2]) is over. The index of open breakers
 * (KEYS[3]) lists the key until it expires, and its version (KEYS[4]) changes with a key newly listed.
 * Returns what it wrote: the opening, as {@link READ} will read it.
 */
const OPEN = `${REDIS_NOW}${BUMP}
local opening = string.format('%.0f', now + tonumber(ARGV[1]))
local value = opening
if ARGV[3] ~= '' then value = opening .. ' ' .. ARGV[3] end
local lives = tonumber(ARGV[1]) + tonumber(ARGV[2])
redis.call('SET', KEYS[1], value, 'PX', lives)
redis.call('DEL', KEYS[2])
if redis.call('ZADD', KEYS[3], now + lives, KEYS[1]) == 1 then bump(KEYS[4]) end
return opening
`

/** Closes the breaker: its key and its probe go, and so does its line in the index (a new version). */
const CLOSE = `${REDIS_NOW}${BUMP}
redis.call('DEL', KEYS[1], KEYS[2])
if redis.call('ZREM', KEYS[3], KEYS[1]) == 1 then bump(KEYS[4]) end
`

/**
 * The index of open breakers (KEYS[1]): the keys it lists, less those expired (dropped here, with
 * a new version, KEYS[2]). Returns the version alone when it is ARGV[1], the one the
 * worker holds; else the version, then the keys.
 */
const LIST = `${REDIS_NOW}${BUMP}
if redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) > 0 then bump(KEYS[2]) end
local version = redis.call('GET', KEYS[2]) or '0'
if version == ARGV[1] then return {version} end
local keys = redis.call('ZRANGE', KEYS[1], 0, -1)
table.insert(keys, 1, version)
return keys
`

/**
 * Where the breaker stands: nil when nobody holds it open, else the opening (unchanged until
 * another), how many ms it is still open for (0 or less: its cool-down is over, and the URL is
 * being probed) and what opened it ('' when unknown). A key that does not hold a time, or not a
 * sane one (see {@link SANE_MS}), reads as nil; the probe's claim reads it as no opening either.
 */
const READ = `${PARSE}
if not opened then return nil end
${REDIS_NOW}
if not ${SANE} then return nil end
return {string.format('%.0f', opened), opened - now, openedBy}
`

/**
 * The probe of a cool-down, claimed only if the breaker is not open again already: a worker whose
 * reading is a second old must not probe a URL another worker's failed probe has just reopened.
 * Returns 0 (claimed), -1 (another worker probes) or how many ms the breaker is still open for.
 */
const CLAIM = `${PARSE}
opened = opened or 0
${REDIS_NOW}
if not ${SANE} then opened = 0 end
if opened > now then return opened - now end
if redis.call('SET', KEYS[2], '1', 'PX', ARGV[1], 'NX') then return 0 end
return -1
`

/** How often a worker reads the index of open breakers, and an open URL's shared breaker, at most (ms). */
export const BREAKER_REFRESH_MS = 1_000

/** What one URL's shared breaker looked like when last read. */
interface Reading {
  /** What the key held (`undefined`: nothing): the same opening reads the same. */
  opening: string | undefined
  /** Until when it is open, on this worker's clock; `undefined`: nobody holds it open. */
  openUntil: number | undefined
  /** The failure that opened it, where the key says. */
  openedBy: AttemptFailure | undefined
  readAt: number
  /** The read under way, if one is. */
  reading: Promise<void> | undefined
}

/**
 * The circuit breakers of every worker on a queue, in Redis: one key per URL, holding until when
 * it is open on Redis's clock, and an index that lists the keys of the open ones. A worker whose
 * own failures open a breaker writes both. Every worker reads the index (before its first
 * question, then at most once per {@link BREAKER_REFRESH_MS}, in one call whatever the number of
 * URLs, and only a version number while nothing opened or closed), and reads the key of a URL the
 * index lists (when it first meets the URL, when the URL enters or leaves the index, and at most
 * once per refresh while open), without waiting for the answer once it has one. So a fleet that
 * meets 50,000 healthy URLs reads no key of theirs, and keeps nothing of them. Once the cool-down is
 * over, the key stays while the URL is being probed: one worker wins the probe with `SET NX`, so
 * ten workers send one probe, not ten. The probe's success deletes the key; its failure writes a
 * new opening.
 */
export class SharedBreakers implements SharedCircuit {
  readonly #store: () => Promise<BreakerStore>
  readonly #timeoutMs: number
  readonly #coolDownMs: number
  readonly #now: () => number
  readonly #failed: (error: Error) => void
  /** By breaker key. A closed reading is worth nothing beside the index: those go once many have come. */
  readonly #readings = new SweptMap<string, Reading>(
    (reading) => reading.openUntil === undefined && reading.reading === undefined,
  )
  readonly #keys: UrlKeys
  readonly #indexKey: string
  readonly #versionKey: string
  /** The keys the index listed when last read; `undefined` before its first reading. */
  #index: ReadonlySet<string> | undefined = undefined
  // Stryker disable next-line StringLiteral: any text Redis's counter never holds reads the first listing whole.
  #indexVersion = ''
  #indexReadAt = Number.NEGATIVE_INFINITY
  #indexReading: Promise<void> | undefined = undefined

  /**
   * @param prefix - The queue's keys: `{prefix}:{name}`; breakers live under `{prefix}:{name}:breaker:`,
   *   their index at `{prefix}:{name}:breakers-open`.
   * @param now - The worker's clock: what it is told is on it.
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
    this.#indexKey = `${options.prefix}:breakers-open`
    this.#versionKey = `${options.prefix}:breakers-open:version`
    this.#timeoutMs = options.timeoutMs
    this.#coolDownMs = options.coolDownMs
    this.#now = options.now
    this.#failed = options.failed
  }

  /**
   * Until when `url`'s shared breaker is open, on this worker's clock; `undefined` when nobody
   * holds it open. The first time a process asks, it waits for the index; the first time it asks
   * about a URL the index lists, it waits for the URL's key (a read that fails reads as nobody
   * holding it open); later see {@link known}.
   */
  async read(url: string): Promise<number | undefined> {
    let known = this.known(url)
    if (known === UNREAD && this.#index === undefined) {
      await (this.#indexReading ?? this.#readIndex())
      known = this.known(url)
    }
    return known === UNREAD ? this.#firstReading(this.#keys.of(url)) : known
  }

  /**
   * {@link read} without waiting: the last reading of `url`'s shared breaker (a read in the
   * background when the index or an open URL's reading is older than {@link BREAKER_REFRESH_MS}),
   * or {@link UNREAD} when there is none yet, which `read` waits for.
   */
  known(url: string): number | undefined | typeof UNREAD {
    const now = this.#now()
    if (this.#indexReading === undefined && now - this.#indexReadAt >= BREAKER_REFRESH_MS) void this.#readIndex()
    const key = this.#keys.of(url)
    const reading = this.#readings.get(key)
    if (reading === undefined || reading.readAt === Number.NEGATIVE_INFINITY) {
      // Not listed as open: nobody holds it open, and nothing of it needs keeping.
      if (this.#index !== undefined && !this.#index.has(key)) return undefined
      return UNREAD
    }
    // A closed one the index does not list changes only by entering the index.
    const mayChange = reading.openUntil !== undefined || this.#index === undefined || this.#index.has(key)
    if (mayChange && reading.reading === undefined && now - reading.readAt >= BREAKER_REFRESH_MS)
      void this.#read(key, reading)
    return reading.openUntil
  }

  async #firstReading(key: string): Promise<number | undefined> {
    let reading = this.#readings.get(key)
    if (reading === undefined) {
      reading = {
        opening: undefined,
        openUntil: undefined,
        openedBy: undefined,
        readAt: Number.NEGATIVE_INFINITY,
        reading: undefined,
      }
      this.#keep(key, reading)
    }
    // Never read (or the reads failed): whoever asks waits for an answer, not only the first to ask.
    await (reading.reading ?? this.#read(key, reading))
    return reading.openUntil
  }

  #read(key: string, reading: Reading): Promise<void> {
    reading.reading = this.#store()
      .then((store) => evalCached(store, READ, 1, key))
      .then(
        (answer) => {
          const now = this.#now()
          reading.readAt = now
          if (!Array.isArray(answer)) {
            reading.opening = undefined
            reading.openUntil = undefined
            reading.openedBy = undefined
            return
          }
          const [opening, left, openedBy] = answer as [string, number, string]
          // The same opening as last read keeps the same time: a round trip's jitter is no news.
          if (opening === reading.opening) return
          reading.opening = opening
          reading.openUntil = now + Number(left)
          reading.openedBy = readOpenedBy(openedBy)
        },
        (error: unknown) => this.#failed(error as Error),
      )
      .finally(() => {
        reading.reading = undefined
      })
    return reading.reading
  }

  /**
   * Reads the index of open breakers: nothing but its version while that is unchanged. A key
   * that entered or left it since is read again at once, where this worker holds a reading of it.
   */
  #readIndex(): Promise<void> {
    this.#indexReadAt = this.#now()
    this.#indexReading = this.#store()
      .then((store) => evalCached(store, LIST, 2, this.#indexKey, this.#versionKey, this.#indexVersion))
      .then(
        (answer) => {
          const [version, ...keys] = answer as string[]
          if (version === this.#indexVersion) return
          const before = this.#index
          const now = new Set(keys)
          this.#index = now
          this.#indexVersion = version as string
          if (before === undefined) return
          for (const key of now) if (!before.has(key)) this.#readAgain(key)
          for (const key of before) if (!now.has(key)) this.#readAgain(key)
        },
        (error: unknown) => this.#failed(error as Error),
      )
      .finally(() => {
        this.#indexReading = undefined
      })
    return this.#indexReading
  }

  #readAgain(key: string): void {
    const reading = this.#readings.get(key)
    if (reading !== undefined && reading.reading === undefined) void this.#read(key, reading)
  }

  /**
   * Tells every worker that `url`'s breaker is open for `coolDownMs`, and what opened it (its
   * code, status and cause's text), where known. The key outlives the
   * cool-down by the time a few probes take, so that the URL stays held while it is probed.
   */
  open(url: string, coolDownMs: number, openedBy?: AttemptFailure): void {
    const key = this.#keys.of(url)
    const reading = this.#remember(key, this.#now() + coolDownMs, openedBy)
    const told = openedBy === undefined ? '' : writeOpenedBy(openedBy)
    const keys = [key, `${key}:probe`, this.#indexKey, this.#versionKey]
    this.#store()
      .then((store) => evalCached(store, OPEN, 4, ...keys, coolDownMs, this.#coolDownMs + 4 * this.#timeoutMs, told))
      .then((opening) => {
        // Its own opening, when read back, keeps the time this worker gave it.
        reading.opening = String(opening)
      })
      .catch((error: unknown) => this.#failed(error as Error))
  }

  /** Tells every worker that `url`'s breaker is closed, and that its probe is over. */
  close(url: string): void {
    const key = this.#keys.of(url)
    this.#remember(key, undefined)
    this.#store()
      .then((store) => evalCached(store, CLOSE, 4, key, `${key}:probe`, this.#indexKey, this.#versionKey))
      .catch((error: unknown) => this.#failed(error as Error))
  }

  /**
   * Whether this worker may send the one probe of `url`'s cool-down: the first to ask wins, until
   * the probe's time is up, and nobody wins while another worker's failed probe has opened the
   * breaker again (`openUntil` says until when, on this worker's clock, and is remembered).
   * Without Redis the answer is yes: the process's own breaker still holds.
   */
  async claimProbe(url: string): Promise<{ claimed: boolean; openUntil?: number }> {
    try {
      const store = await this.#store()
      const key = this.#keys.of(url)
      const answer = Number(await evalCached(store, CLAIM, 2, key, `${key}:probe`, this.#timeoutMs + 1_000))
      if (answer > 0) {
        const openUntil = this.#now() + answer
        this.#remember(key, openUntil)
        return { claimed: false, openUntil }
      }
      return { claimed: answer === 0 }
    } catch (error) {
      this.#failed(error as Error)
      return { claimed: true }
    }
  }

  /** The failure that opened `url`'s shared breaker, as last read or written here; `undefined` when not known. */
  openedBy(url: string): AttemptFailure | undefined {
    return this.#readings.get(this.#keys.of(url))?.openedBy
  }

  /** What this worker decided or was told, as a reading of now (the next read in the background is a refresh away). */
  #remember(key: string, openUntil: number | undefined, openedBy?: AttemptFailure): Reading {
    const reading: Reading = { opening: undefined, openUntil, openedBy, readAt: this.#now(), reading: undefined }
    this.#keep(key, reading)
    return reading
  }

  #keep(key: string, reading: Reading): void {
    this.#readings.sweepIfGrown()
    this.#readings.set(key, reading)
  }
}

/** The codes of answers that count against a breaker: all that a key may say opened one. */
const OPENING_CODES: ReadonlySet<string> = new Set<WebhookErrorCode>([
  'ERR_HTTP_STATUS',
  'ERR_TIMEOUT',
  'ERR_NETWORK',
  'ERR_TLS_CERTIFICATE',
])

/** What opened a breaker, as its key keeps it: the code, the status, the cause's text. */
function writeOpenedBy({ code, status, cause }: AttemptFailure): string {
  return JSON.stringify({ code, status, cause: cause === undefined ? undefined : causeText(cause) })
}

/**
 * What opened a breaker, read back from its key: anything with Redis access can write the key,
 * so what is not such a failure reads as unknown.
 */
function readOpenedBy(text: string): AttemptFailure | undefined {
  let read: Record<string, unknown>
  try {
    // A number or a string has no fields (all undefined below); null and what does not parse throw.
    const { code, status, cause } = JSON.parse(text) as Record<string, unknown>
    read = { code, status, cause }
  } catch {
    return undefined
  }
  const { code, status, cause } = read
  if (typeof code !== 'string' || !OPENING_CODES.has(code)) return undefined
  return {
    code: code as WebhookErrorCode,
    ...(Number.isInteger(status) ? { status: status as number } : {}),
    ...(typeof cause === 'string' ? { cause: new Error(cause.slice(0, MAX_CAUSE_TEXT)) } : {}),
  }
}
