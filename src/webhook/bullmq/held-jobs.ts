import type { Endpoint } from '../network/endpoint.js'
import type { DeliveryState, TargetState } from '../delivery/state.js'
import type { StoredState } from './job-data.js'
import { UrlKeys } from './url-keys.js'
import { REDIS_NOW } from './redis-now.js'
import { evalCached, type ScriptStore } from './cached-script.js'

// The jobs held back, in Redis: BullMQ keeps a retry and a job held back by a URL in one delayed
// set, and only the job's stored state says which it is. Reading every delayed job to tell them
// apart would cost Redis a second per hundred thousand jobs, so the worker that holds a job back
// notes it here as well, by when the hold ends: one sorted set per reason for the queue, and one
// per reason and URL. An entry whose time has come no longer counts and is trimmed, so a job
// removed from outside while held (a dashboard, `obliterate`) leaves nothing behind past its hold.

/** Why a job waits, when it is not for a retry: a URL's breaker is open, or its slots or rate are taken. */
export type HeldReason = 'breaker' | 'slots'

/** What held jobs are written and read with: ioredis's scripts, as BullMQ's connection runs them. */
export type HeldStore = ScriptStore

/**
 * The entries of one job, rewritten: KEYS[1] and KEYS[2] hold the queue's jobs held by a breaker
 * and by slots, KEYS[3] names each URL's hash (field: the hash, value: the URL), then two keys
 * per URL (breaker, slots). ARGV: the job's id, its reason ('' for none) and when its hold ends,
 * then four per URL: its hash, the URL, its reason ('' to remove the job) and when it ends. Each
 * key loses the entries whose hold has ended, and outlives its last entry by a minute.
 */
const HOLD = `${REDIS_NOW}
local job = ARGV[1]
local function put(breakerKey, slotsKey, reason, due)
  for _, key in ipairs({breakerKey, slotsKey}) do
    redis.call('ZREM', key, job)
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  end
  if reason == '' then return false end
  local key = reason == 'breaker' and breakerKey or slotsKey
  local ends = tonumber(due)
  redis.call('ZADD', key, ends, job)
  local ttl = math.max(ends - now, 0) + 60000
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
  return true
end
put(KEYS[1], KEYS[2], ARGV[2], ARGV[3])
local urls = (#ARGV - 3) / 4
for i = 0, urls - 1 do
  local at = 4 + i * 4
  if put(KEYS[4 + i * 2], KEYS[5 + i * 2], ARGV[at + 2], ARGV[at + 3]) then
    redis.call('HSET', KEYS[3], ARGV[at], ARGV[at + 1])
  end
end
return urls
`

/**
 * What the queue holds back, and how late its work is. KEYS: the URLs' hash, the queue's jobs
 * held by a breaker and by slots, BullMQ's wait list and delayed set. ARGV: the prefixes of the
 * URLs' breaker and slots keys, the prefix of a job's key, and the caller's now in ms (BullMQ
 * times its delayed set by the clock of whoever wrote it). Returns the jobs held by a breaker and
 * by slots, how late the work is in ms (-1: nothing due), when the next job a worker takes was
 * enqueued (BullMQ's timestamp; -1: none waits), then three per URL that holds any: the URL and
 * its two counts. A URL that holds none is forgotten.
 *
 * How late: the next job a worker takes (the end of the wait list) has been due since the
 * earliest due time its stored state gives its URLs, or since it was enqueued; a delayed job
 * whose time has come waits for a worker too.
 */
const READ = `${REDIS_NOW}
local breakerJobs = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local slotsJobs = redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf')
local late = -1
local enqueued = -1
local head = redis.call('LINDEX', KEYS[4], -1)
if head then
  local jobKey = ARGV[3] .. head
  enqueued = tonumber(redis.call('HGET', jobKey, 'timestamp')) or -1
  local due
  local ok, data = pcall(cjson.decode, redis.call('HGET', jobKey, 'data') or '')
  if ok and type(data) == 'table' and type(data.state) == 'table' and type(data.state.targets) == 'table' then
    for _, target in ipairs(data.state.targets) do
      if type(target) == 'table' and target.status == 'pending' and type(target.dueAt) == 'number' then
        due = math.min(due or target.dueAt, target.dueAt)
      end
    end
  end
  if not due and enqueued >= 0 then due = enqueued end
  if due and due == due then late = math.max(now - due, 0) end
end
local first = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
if first[2] then
  local due = math.floor(tonumber(first[2]) / 4096)
  local callerNow = tonumber(ARGV[4])
  if due <= callerNow then late = math.max(late, callerNow - due) end
end
local result = {breakerJobs, slotsJobs, late, enqueued}
local urls = redis.call('HGETALL', KEYS[1])
for i = 1, #urls, 2 do
  local counts = {}
  local kept = 0
  for _, prefix in ipairs({ARGV[1], ARGV[2]}) do
    local key = prefix .. urls[i]
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    local count = redis.call('ZCARD', key)
    kept = kept + count
    table.insert(counts, count)
  end
  if kept == 0 then
    redis.call('HDEL', KEYS[1], urls[i])
  else
    table.insert(result, urls[i + 1])
    table.insert(result, counts[1])
    table.insert(result, counts[2])
  end
end
return result
`

/** One URL that holds events back, across every worker of the queue. */
export interface HeldUrl {
  readonly url: string
  /** Events waiting for this URL's breaker to close (or for its probe to succeed). */
  readonly heldByBreaker: number
  /** Events waiting for one of this URL's slots, or for its rate to allow another request. */
  readonly heldForSlots: number
}

/** What {@link HeldJobs.read} finds. */
export interface HeldCounts {
  /** Jobs held by an open breaker at one of their URLs. */
  readonly heldByBreaker: number
  /** Jobs held because a URL's slots or rate were taken. */
  readonly heldForSlots: number
  /** How long the next job a worker takes has been due (ms); `undefined` with nothing due. */
  readonly lateMs: number | undefined
  /** When the next job a worker takes was enqueued (epoch ms, its producer's clock); `undefined` with none waiting. */
  readonly oldestEnqueuedAt: number | undefined
  /** Each URL holding jobs back, in no particular order. */
  readonly urls: readonly HeldUrl[]
}

/** One URL's entry in a {@link HOLD}: its reason ('' to remove) and when its hold ends. */
interface UrlHold {
  readonly url: string
  readonly reason: HeldReason | ''
  readonly until: number
}

/** What a stored or live state's targets have in common here. */
type Target = Pick<TargetState, 'status' | 'held' | 'dueAt'> &
  ({ readonly url: string } | { readonly endpoint: Endpoint })

const urlOf = (target: Target): string => ('url' in target ? target.url : target.endpoint.url)

/**
 * The jobs a queue's workers hold back, by reason and by URL (see the note at the top of this
 * file). Keys live under `{prefix}:{name}:held:`, in the queue's hash slot.
 */
export class HeldJobs {
  readonly #breakerJobs: string
  readonly #slotsJobs: string
  readonly #urls: string
  /** Where each URL's keys start: its hash (a {@link UrlKeys} of its own) follows. */
  readonly #breakerPrefix: string
  readonly #slotsPrefix: string
  readonly #breakerKeys: UrlKeys
  readonly #slotsKeys: UrlKeys
  readonly #hashes = new UrlKeys('')

  /** @param keys - The queue's keys: `{prefix}:{name}`. */
  constructor(keys: string) {
    this.#breakerJobs = `${keys}:held:breaker`
    this.#slotsJobs = `${keys}:held:slots`
    this.#urls = `${keys}:held:urls`
    this.#breakerPrefix = `${keys}:held:breaker:`
    this.#slotsPrefix = `${keys}:held:slots:`
    this.#breakerKeys = new UrlKeys(this.#breakerPrefix)
    this.#slotsKeys = new UrlKeys(this.#slotsPrefix)
  }

  /**
   * Notes what a job's round left held back, and forgets what the round before it had: one
   * command, and none for a job that was held neither before nor after (the common case).
   *
   * @param before - The state the round started from, as stored.
   * @param after - The state the job goes back to Redis with, `undefined` once it is finished.
   * @param dueAt - When the job comes back (with `after`).
   */
  record(
    store: HeldStore,
    jobId: string,
    before: StoredState | undefined,
    after: DeliveryState<Endpoint> | undefined,
    dueAt: number,
  ): Promise<unknown> | undefined {
    const holds = new Map<string, UrlHold>()
    // What the round before held is forgotten (a URL sent to since has no hold any more).
    for (const target of before?.targets ?? []) {
      if (target.held !== undefined) holds.set(urlOf(target), { url: urlOf(target), reason: '', until: 0 })
    }
    let reason: HeldReason | '' = ''
    for (const target of after?.targets ?? []) {
      // A URL that failed at the window's end keeps what held it, to name it in the dead letter.
      if (target.status !== 'pending' || target.held === undefined || target.dueAt === undefined) continue
      const url = urlOf(target)
      // A URL listed twice is held until the later of its two holds ends.
      const until = Math.max(holds.get(url)?.until ?? 0, target.dueAt)
      holds.set(url, { url, reason: target.held, until })
      // The job is held when what it comes back for first is a hold, by a breaker before slots.
      if (target.dueAt <= dueAt && reason !== 'breaker') reason = target.held
    }
    if (holds.size === 0) return undefined
    const keys: string[] = [this.#breakerJobs, this.#slotsJobs, this.#urls]
    const args: Array<string | number> = [jobId, reason, dueAt]
    for (const hold of holds.values()) {
      keys.push(this.#breakerKeys.of(hold.url), this.#slotsKeys.of(hold.url))
      args.push(this.#hashes.of(hold.url), hold.url, hold.reason, hold.until)
    }
    return evalCached(store, HOLD, keys.length, ...keys, ...args)
  }

  /**
   * What the queue holds back now, across every worker, and how late its work is.
   *
   * @param queueKeys - BullMQ's keys of the queue: its wait list, its delayed set, and the
   *   prefix of a job's key (`{prefix}:{name}:`).
   */
  async read(
    store: HeldStore,
    queueKeys: { readonly wait: string; readonly delayed: string; readonly job: string },
  ): Promise<HeldCounts> {
    const reply = (await evalCached(
      store,
      READ,
      5,
      this.#urls,
      this.#breakerJobs,
      this.#slotsJobs,
      queueKeys.wait,
      queueKeys.delayed,
      this.#breakerPrefix,
      this.#slotsPrefix,
      queueKeys.job,
      Date.now(),
    )) as Array<number | string>
    const urls: HeldUrl[] = []
    for (let i = 4; i < reply.length; i += 3) {
      urls.push({ url: String(reply[i]), heldByBreaker: Number(reply[i + 1]), heldForSlots: Number(reply[i + 2]) })
    }
    const late = Number(reply[2])
    const enqueued = Number(reply[3])
    return {
      heldByBreaker: Number(reply[0]),
      heldForSlots: Number(reply[1]),
      lateMs: late >= 0 ? late : undefined,
      // Stryker disable next-line EqualityOperator: no job is enqueued at the epoch's first millisecond.
      oldestEnqueuedAt: enqueued >= 0 ? enqueued : undefined,
      urls,
    }
  }
}
