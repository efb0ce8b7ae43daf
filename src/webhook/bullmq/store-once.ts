import { jobIdOf, type WebhookJobData } from './job-data.js'
import type { StoredJobQueue } from './stored-queue.js'
import { ADMIT_FUNCTIONS, PARTY_KEYS_FROM_JOB_PREFIX, WAKE } from './fair-queueing.js'
import { REMEMBERED_FUNCTIONS, shardHash } from './remembered-ids.js'

/**
 * What Redis had of an event id when an event was stored: nothing (`queued`: stored now), an
 * event in flight or remembered after delivery (`duplicate`), or a dead letter.
 */
export type StoreOutcome = 'queued' | 'duplicate' | 'dead-letter'

/** An event as the producer stores it. */
export interface EventToStore {
  readonly eventId: string
  readonly body: string
  /** The registry's destination it goes to, if any. */
  readonly destination?: string | undefined
  /**
   * Sent again by `replay()`: stored even when its id is remembered after delivery (what a replay
   * is for), though never beside a job of the same id in Redis.
   */
  readonly replay?: boolean | undefined
}

/**
 * How each job is kept, where it differs from what workers apply by default (a job without these
 * fields costs Redis nothing for them).
 */
export interface StoreOptions {
  /** BullMQ's retention of failed jobs (the dead letters), in seconds and jobs; workers apply the defaults. */
  readonly removeOnFail?: { readonly age: number; readonly count: number } | undefined
  /** How long Redis remembers an event id after it was stored (ms), when not the default; 0 for no longer than its job. */
  readonly dedupWindowMs?: number | undefined
}

/** The name the script below is defined under on BullMQ's Redis connection. */
// Stryker disable next-line StringLiteral: any name works; this one only keeps ours apart from BullMQ's own.
const STORE = 'eventwireStore'

/** The job name every event is stored under. */
const JOB_NAME = 'deliver'

// Stores events as BullMQ jobs, each id once, in one script: a read of what Redis holds of each
// id, then, for an id it has nothing of, the writes BullMQ's own add script makes for a job
// without delay, priority, parent or de-duplication (job-store.test.ts compares the two).
// Nothing runs between the read and the writes, so the answer is the one the writes met.
//
// KEYS: [1] the failed set, [2] the wait list, [3] the meta hash, [4] the id counter, [5] the
// events stream, [6] the marker set, [7] the active list. ARGV[1]: the job key prefix; ARGV[2]:
// the prefix of BullMQ's de-duplication keys (an earlier version's way to remember an id after
// delivery); ARGV[3]: the job options after the job id, as JSON; ARGV[4..]: per event its job
// id, its shard hash (remembered-ids.ts) or -1 for an event sent again by replay() (its id is not
// looked for among those remembered after delivery), and its job data. Job, de-duplication and
// remembered ids' keys are built from the prefixes, as BullMQ's own scripts build job keys: with
// a hash-tagged prefix they are in the slot of KEYS[1].
//
// Each id stored now is admitted to the wait list or parked behind its destination's backlog
// (fair-queueing.ts). The job's timestamp, which its retry window counts from, is Redis's clock.
// Answers per id: 0 stored now, 1 a job in flight or an id remembered after delivery, 2 a dead letter.
const STORE_LUA = `${PARTY_KEYS_FROM_JOB_PREFIX}${REMEMBERED_FUNCTIONS}${ADMIT_FUNCTIONS}${WAKE}
local eventsKey = KEYS[5]
local maxEvents = redis.call('HGET', KEYS[3], 'opts.maxLenEvents')
if not maxEvents then
  maxEvents = 10000
  redis.call('HSET', KEYS[3], 'opts.maxLenEvents', maxEvents)
end
local timestamp = redisNow()
local answers = {}
local waiting = {}
-- Read once, at the first id that has no job.
local checks
for i = 4, #ARGV, 3 do
  local id = ARGV[i]
  local job = ARGV[1] .. id
  local at = (i - 1) / 3
  local answer = 0
  if redis.call('EXISTS', job) == 1 then
    if redis.call('ZSCORE', KEYS[1], id) then answer = 2 else answer = 1 end
  else
    local hash = tonumber(ARGV[i + 1])
    if hash >= 0 then checks = checks or rememberedIn() end
    if hash >= 0 and (redis.call('EXISTS', ARGV[2] .. id) == 1 or remembered(checks, id, hash)) then answer = 1 end
  end
  answers[at] = answer
  if answer == 0 then
    redis.call('HMSET', job, 'name', '${JOB_NAME}', 'data', ARGV[i + 2], 'opts', '{"jobId":' .. cjson.encode(id) .. ',' .. ARGV[3],
      'timestamp', timestamp, 'delay', 0, 'priority', 0)
    redis.call('XADD', eventsKey, '*', 'event', 'added', 'jobId', id, 'name', '${JOB_NAME}')
    if admit(id) then waiting[#waiting + 1] = id end
    redis.call('XADD', eventsKey, 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', id)
  else
    redis.call('XADD', eventsKey, 'MAXLEN', '~', maxEvents, '*', 'event', 'duplicated', 'jobId', id)
  end
end
-- BullMQ's add counts every call, a duplicate too.
redis.call('INCRBY', KEYS[4], (#ARGV - 3) / 3)
admitted()
if #waiting > 0 then
  pushAll('LPUSH', KEYS[2], waiting)
  wake(KEYS[6], KEYS[3], KEYS[7])
end
return answers
`

const OUTCOMES: readonly StoreOutcome[] = ['queued', 'duplicate', 'dead-letter']

/**
 * Stores events as BullMQ jobs, each id once, and says what Redis already had of each: one script
 * (see STORE_LUA) reads every id and writes each new one's job, in one round trip.
 *
 * A repeat of an id within `events` answers as its first copy did, but for a first copy stored
 * now: the repeat is a duplicate of it. The window after delivery is the worker's to write, when
 * it delivers: a waiting job costs Redis nothing for it.
 *
 * A connection lost before the script was sent stores none of the events.
 */
export async function storeOnce(
  queue: StoredJobQueue<WebhookJobData>,
  events: readonly EventToStore[],
  options: StoreOptions,
): Promise<StoreOutcome[]> {
  const client = await queue.backend.client
  // Stryker disable next-line ConditionalExpression: defining the script again costs a little, and changes nothing.
  if (!(STORE in client)) client.defineCommand(STORE, { numberOfKeys: 7, lua: STORE_LUA })
  /** Each job id's position in what is sent. */
  const positions = new Map<string, number>()
  /** Indexes (in `events`) of events whose id came earlier in `events`. */
  const repeats = new Set<number>()
  const { removeOnFail, dedupWindowMs: window } = options
  const keys = queue.keys
  // The options of a job after its id, as BullMQ's add stores them: the same for every job.
  // (removeOnFail, when undefined, is left out by JSON.stringify.)
  const tail = JSON.stringify({ removeOnComplete: true, removeOnFail, attempts: 0 }).slice(1)
  const args: (string | number)[] = [
    keys.failed as string,
    keys.wait as string,
    keys.meta as string,
    keys.id as string,
    keys.events as string,
    keys.marker as string,
    keys.active as string,
    keys[''] as string,
    `${keys.de}:`,
    tail,
  ]
  const jobIds = events.map((event) => jobIdOf(event.eventId, event.destination))
  for (const [index, event] of events.entries()) {
    const jobId = jobIds[index] as string
    if (positions.has(jobId)) {
      repeats.add(index)
      continue
    }
    positions.set(jobId, positions.size)
    const { eventId, body, destination, replay } = event
    const data: WebhookJobData = {
      eventId,
      body,
      ...(destination === undefined ? {} : { destination }),
      ...(window === undefined ? {} : { dedupWindowMs: window }),
      ...(replay === true ? { replayed: true as const } : {}),
    }
    args.push(jobId, replay === true ? -1 : shardHash(jobId), JSON.stringify(data))
  }
  const seen = (await client.runCommand(STORE, args)) as number[]
  return events.map((_event, index) => {
    const first = OUTCOMES[seen[positions.get(jobIds[index] as string) as number] as number] as StoreOutcome
    // A dead letter's id is a dead letter in every copy; an id found in flight, a duplicate in every copy.
    return repeats.has(index) && first === 'queued' ? 'duplicate' : first
  })
}
