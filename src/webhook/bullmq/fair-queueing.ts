// Fair queueing between destinations. BullMQ's wait list is first in, first out: a destination
// that enqueues a million events at once would have every other destination's events wait behind
// them. So each destination (and the workers' own `webhooks`, as one more) may have at most
// FAIR_WINDOW events in the wait list that no worker has taken yet. Its events past that are
// parked: stored as BullMQ jobs, as any event, but listed in the destination's own parked list
// instead of the wait list. Each time a worker takes one of a destination's events, one of its
// parked events moves to the wait list, behind whatever waits there. A new event of a quiet
// destination so waits behind at most FAIR_WINDOW events of each busy one, however long their
// backlogs are.
//
// Keys, under the queue's `<prefix>:<name>` (so in its slot on a cluster), per destination (its
// "party"; the workers' own webhooks are the party ''):
//   :fair:<party>    set: the ids of its events in the wait list that no worker has taken yet
//   :parked:<party>  list: its parked events' ids, oldest first
//   :fair-parties    set: the parties with parked events
//   :parked-count    the number of parked events in all, for `counts()`
//   :fair-swept      set for SWEEP_MS by the worker that swept last, so that the others do not

/** Events of one destination that may wait for a worker in BullMQ's wait list at once; the rest are parked. */
export const FAIR_WINDOW = 200

/** How long an admitted set outlives its last write (ms): what a set whose events vanished from outside is forgotten after. */
export const ADMITTED_TTL_MS = 3_600_000

/** How often the workers look for parked events that nothing released (ms), one of them each time: see `FairQueueing.sweep`. */
export const SWEEP_MS = 5_000

/** Parties a sweep looks at, at most. */
export const PARTIES_PER_SWEEP = 20

/**
 * The party of a job: its destination, or '' for the workers' own webhooks. Read from its id (see
 * `jobIdOf`: `dst-<destination>/<encoded id>`, or `evt-<encoded id>` without a `/`): a job whose
 * data cannot be read still has one.
 */
export function partyOfJob(jobId: string): string {
  const slash = jobId.indexOf('/')
  return slash === -1 ? '' : jobId.slice(4, slash)
}

// A party's key of a kind, under `base` (the queue's `<prefix>:<name>`), which the script defines first;
// and `pushAll`, which sends many values in commands of a thousand (Lua's unpack has a bound).
const KEY_OF = `
local function keyOf(kind, party)
  if party == '' then return base .. ':' .. kind end
  return base .. ':' .. kind .. ':' .. party
end
local function pushAll(command, key, values)
  for i = 1, #values, 1000 do
    redis.call(command, key, unpack(values, i, math.min(i + 999, #values)))
  end
end
`

// The worker's scripts' opening: `base` is ARGV[1].
const PARTY_KEYS = `
local base = ARGV[1]
${KEY_OF}`

/**
 * Lua: `wake(marker, meta, active)` wakes the workers as BullMQ's own add does (a member in the
 * marker set), unless the queue is paused or at its global concurrency.
 */
export const WAKE = `
local function wake(marker, meta, active)
  local state = redis.call('HMGET', meta, 'paused', 'concurrency')
  if state[1] then return end
  if state[2] and redis.call('LLEN', active) >= tonumber(state[2]) then return end
  redis.call('ZADD', marker, 0, '0')
end
`

// Moves up to `room` of a party's parked events to the wait list (KEYS[1]), skipping any whose
// job is gone (removed from outside while parked). Returns how many moved.
const RELEASE_PARTY = `
local function release(party, room)
  local parked = keyOf('parked', party)
  local moved = {}
  local popped = 0
  while #moved < room do
    local want = room - #moved
    local ids = redis.call('LRANGE', parked, 0, want - 1)
    if #ids == 0 then break end
    redis.call('LTRIM', parked, #ids, -1)
    popped = popped + #ids
    local jobs = {}
    for i, id in ipairs(ids) do jobs[i] = base .. ':' .. id end
    -- One EXISTS for them all (at most a window of ids); each alone only when some job is gone.
    local whole = redis.call('EXISTS', unpack(jobs)) == #jobs
    for i, id in ipairs(ids) do
      if whole or redis.call('EXISTS', jobs[i]) == 1 then moved[#moved + 1] = id end
    end
  end
  if redis.call('EXISTS', parked) == 0 then redis.call('SREM', base .. ':fair-parties', party) end
  if popped == 0 then return 0 end
  redis.call('DECRBY', base .. ':parked-count', popped)
  if #moved == 0 then return 0 end
  -- Oldest first onto the head: the workers take from the tail, so in the order they were parked.
  redis.call('LPUSH', KEYS[1], unpack(moved))
  local admitted = keyOf('fair', party)
  redis.call('SADD', admitted, unpack(moved))
  redis.call('PEXPIRE', admitted, ${ADMITTED_TTL_MS})
  return #moved
end
${WAKE}`

/**
 * Lua that admits or parks the events the store script stores: `admit(id)` for each id stored
 * now, true when it goes on the wait list and false when it is parked, then `admitted()` once,
 * which writes the parked lists. It needs {@link PARTY_KEYS_FROM_JOB_PREFIX} before it. The store
 * script runs whole, so what it reads is what its writes meet.
 */
export const ADMIT_FUNCTIONS = `
local window = ${FAIR_WINDOW}
local room = {}
local parkedBy = {}
local parkedAll = 0
local function admit(id)
  local party = ''
  local slash = string.sub(id, 1, 4) == 'dst-' and string.find(id, '/', 5, true)
  if slash then party = string.sub(id, 5, slash - 1) end
  local left = room[party]
  if left == nil then
    if redis.call('EXISTS', keyOf('parked', party)) == 1 then left = 0
    else left = window - redis.call('SCARD', keyOf('fair', party)) end
  end
  if left > 0 then
    redis.call('SADD', keyOf('fair', party), id)
    room[party] = left - 1
    return true
  end
  local ids = parkedBy[party]
  if ids == nil then
    ids = {}
    parkedBy[party] = ids
  end
  ids[#ids + 1] = id
  parkedAll = parkedAll + 1
  room[party] = 0
  return false
end
local function admitted()
  for party in pairs(room) do redis.call('PEXPIRE', keyOf('fair', party), ${ADMITTED_TTL_MS}) end
  if parkedAll == 0 then return end
  for party, ids in pairs(parkedBy) do
    pushAll('RPUSH', keyOf('parked', party), ids)
    redis.call('SADD', base .. ':fair-parties', party)
  end
  redis.call('INCRBY', base .. ':parked-count', parkedAll)
end
`

/** The Lua opening that defines `base` from the job key prefix in ARGV[1] (`<prefix>:<name>:`), `keyOf` and `pushAll`. */
export const PARTY_KEYS_FROM_JOB_PREFIX = `
local base = string.sub(ARGV[1], 1, -2)
${KEY_OF}`

/**
 * A worker took events that were admitted: each leaves its party's admitted set, and as many of
 * the party's parked events move to the wait list. KEYS: the wait list, the marker set, the
 * meta hash and the active list. ARGV[1]: `<prefix>:<name>`; ARGV[2]: the window; ARGV[3..]:
 * each job id taken and its party. Returns how many moved.
 */
const TAKEN_LUA = `${PARTY_KEYS}${RELEASE_PARTY}
local window = tonumber(ARGV[2])
-- Each party's ids leave its admitted set in one command, not one each.
local parties = {}
for i = 3, #ARGV, 2 do
  local party = ARGV[i + 1]
  local ids = parties[party]
  if ids == nil then
    ids = {}
    parties[party] = ids
  end
  ids[#ids + 1] = ARGV[i]
end
local moved = 0
for party, ids in pairs(parties) do
  pushAll('SREM', keyOf('fair', party), ids)
  local room = window - redis.call('SCARD', keyOf('fair', party))
  if room > 0 and redis.call('EXISTS', keyOf('parked', party)) == 1 then
    moved = moved + release(party, room)
  end
end
if moved > 0 then wake(KEYS[2], KEYS[3], KEYS[4]) end
return moved
`

/**
 * The backstop for what nothing released: a party's admitted set can hold ids that no worker will
 * report taken (a worker whose report Redis refused, events removed from outside, a worker of an
 * older version). For up to ARGV[3] parties with parked events, drops from the admitted set each
 * id whose job is gone or was taken (BullMQ notes `processedOn` when a worker takes a job, and
 * every job has a `timestamp`), then fills the room. KEYS and ARGV[1..2] as TAKEN; ARGV[4]: how
 * long (ms) the queue is not swept again, by this worker or another: one sweep is enough for the
 * fleet. Returns how many moved.
 */
const SWEEP_LUA = `${PARTY_KEYS}${RELEASE_PARTY}
local window = tonumber(ARGV[2])
if not redis.call('SET', base .. ':fair-swept', '1', 'PX', ARGV[4], 'NX') then return 0 end
local parties = redis.call('SRANDMEMBER', base .. ':fair-parties', tonumber(ARGV[3]))
local moved = 0
for _, party in ipairs(parties) do
  local admitted = keyOf('fair', party)
  for _, id in ipairs(redis.call('SMEMBERS', admitted)) do
    local job = redis.call('HMGET', base .. ':' .. id, 'processedOn', 'timestamp')
    if job[1] or not job[2] then redis.call('SREM', admitted, id) end
  end
  moved = moved + release(party, window - redis.call('SCARD', admitted))
end
if moved > 0 then wake(KEYS[2], KEYS[3], KEYS[4]) end
return moved
`

/** The names the scripts are defined under on BullMQ's connection. */
// Stryker disable StringLiteral: any names work; these only keep ours apart from BullMQ's own.
const TAKEN = 'eventwireTaken'
const SWEEP = 'eventwireSweep'
// Stryker restore StringLiteral

/** What the worker's side is sent with: ioredis with the scripts defined on it. */
export interface FairStore {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void
  [TAKEN]?(...keysThenArgs: string[]): Promise<unknown>
  [SWEEP]?(...keysThenArgs: string[]): Promise<unknown>
}

/** BullMQ's keys the worker's scripts touch. */
export interface FairKeys {
  /** The queue's `<prefix>:<name>`. */
  readonly base: string
  readonly wait: string
  readonly marker: string
  readonly meta: string
  readonly active: string
}

/**
 * A worker's side of fair queueing: it reports the admitted events it takes, many at a time (one
 * script call per turn of the event loop that took any), and a report moves as many of their
 * destinations' parked events to the wait list. Every {@link SWEEP_MS} it also releases what
 * nothing reported (see SWEEP_LUA).
 */
export class FairQueueing {
  readonly #store: FairStore
  readonly #keys: FairKeys
  readonly #error: (error: Error) => void
  /** Job ids and their parties taken since the last report, flat. */
  #taken: string[] = []
  #reporting: Promise<void> | undefined
  #sweeper: ReturnType<typeof setInterval> | undefined

  constructor(store: FairStore, keys: FairKeys, error: (error: Error) => void) {
    this.#store = store
    this.#keys = keys
    this.#error = error
    // Stryker disable next-line ConditionalExpression: defining the scripts again costs a little, and changes nothing.
    if (typeof store[TAKEN] !== 'function') {
      store.defineCommand(TAKEN, { numberOfKeys: 4, lua: TAKEN_LUA })
      store.defineCommand(SWEEP, { numberOfKeys: 4, lua: SWEEP_LUA })
    }
  }

  /** Notes that a worker took `jobId`, an event of `party` never taken before; reported with the others of this turn. */
  taken(jobId: string, party: string): void {
    this.#taken.push(jobId, party)
    // Reported at the end of this turn of the event loop, with whatever else it takes: a report
    // that waits longer lets the wait list run dry while the workers still have room
    // (measured: a fifth fewer deliveries a second with a 5 ms wait).
    this.#reporting ??= new Promise((resolve) => setImmediate(resolve)).then(() => this.#report())
  }

  /** Sends what was taken since the last report; a failure is told, never thrown (the sweep makes up for it). */
  async #report(): Promise<void> {
    const taken = this.#taken
    this.#taken = []
    this.#reporting = undefined
    const { base, wait, marker, meta, active } = this.#keys
    const store = this.#store as Required<FairStore>
    try {
      await store[TAKEN](wait, marker, meta, active, base, String(FAIR_WINDOW), ...taken)
    } catch (error) {
      this.#error(error as Error)
    }
  }

  /** Releases what nothing reported, for a sample of the parties with parked events; 0 when a worker swept the queue less than {@link SWEEP_MS} ago. */
  async sweep(): Promise<number> {
    const { base, wait, marker, meta, active } = this.#keys
    const store = this.#store as Required<FairStore>
    return Number(
      await store[SWEEP](
        wait,
        marker,
        meta,
        active,
        base,
        String(FAIR_WINDOW),
        String(PARTIES_PER_SWEEP),
        String(SWEEP_MS),
      ),
    )
  }

  /** Sweeps every {@link SWEEP_MS} until {@link stop}. */
  start(): void {
    this.#sweeper ??= setInterval(() => {
      this.sweep().catch(this.#error)
    }, SWEEP_MS)
    // Stryker disable next-line OptionalChaining: Node's timers have unref; the question mark is for runtimes whose do not.
    this.#sweeper.unref?.()
  }

  /** Stops sweeping; what was taken this turn is still reported. */
  async stop(): Promise<void> {
    clearInterval(this.#sweeper)
    this.#sweeper = undefined
    await this.#reporting
  }
}

/** What the parked events are counted with. */
export interface ParkedStore {
  get(key: string): Promise<string | null>
}

/** The number of parked events, for `counts()`. */
export async function parkedCount(store: ParkedStore, base: string): Promise<number> {
  return Math.max(0, Number(await store.get(`${base}:parked-count`)) || 0)
}
