import type { IRedisClient } from 'bullmq'
import { jobIdOf, type WebhookJobData } from './job-data.js'
import { StoredJob } from './stored-job.js'
import type { StoredJobQueue } from './stored-queue.js'
import { ADMIT_FUNCTIONS, PARK, PARTY_KEYS_FROM_JOB_PREFIX, definePark, parkedNowKey } from './fair-queueing.js'
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

/** The names the scripts below are defined under on BullMQ's Redis connection. */
const SEEN = 'eventwireSeen'
const RELEASE = 'eventwireRelease'

// Reads what Redis holds for each job id, as the first command of the transaction that adds the
// jobs: nothing can come between the read and the adds, so the answer is the one the adds met.
// KEYS[1]: the failed set; KEYS[2]: the list of stand-ins (below); KEYS[3]: the list of the ids
// it parks (fair queueing: each id stored now is admitted to the wait list or parked, see
// fair-queueing.ts). ARGV[1]: the job key prefix;
// ARGV[2]: the prefix of BullMQ's de-duplication keys; ARGV[3..]: each job id and its shard hash
// (remembered-ids.ts), or -1 for an event sent again by replay(): its id is not looked for among
// those remembered after delivery. Job, de-duplication and remembered ids' keys are built from the prefixes,
// as BullMQ's own scripts build job keys: with a hash-tagged prefix they are in the slot of KEYS[1].
// Answers per id: 0 nothing, 1 a job in flight or an id remembered after delivery, 2 a dead letter.
//
// An id remembered after delivery (in the hashes the worker writes when it delivers, or a
// de-duplication key of BullMQ's or of an earlier version's) has no job, and BullMQ's add would store it again. So its job key gets a stand-in for
// the length of the transaction: BullMQ's add of an id whose job key exists is a no-op, as for a
// job in Redis. The stand-in's key goes on KEYS[2], and RELEASE, the transaction's last command,
// deletes it: nobody else sees it.
const SEEN_LUA = `${PARTY_KEYS_FROM_JOB_PREFIX}${REMEMBERED_FUNCTIONS}
local parkedNow = KEYS[3]
${ADMIT_FUNCTIONS}
local answers = {}
-- Read once, at the first id that has no job.
local checks
for i = 3, #ARGV, 2 do
  local id = ARGV[i]
  local job = ARGV[1] .. id
  local at = (i - 1) / 2
  if redis.call('EXISTS', job) == 1 then
    if redis.call('ZSCORE', KEYS[1], id) then answers[at] = 2 else answers[at] = 1 end
  else
    local hash = tonumber(ARGV[i + 1])
    if hash >= 0 then checks = checks or rememberedIn() end
    if hash >= 0 and (redis.call('EXISTS', ARGV[2] .. id) == 1 or remembered(checks, id, hash)) then
      answers[at] = 1
      redis.call('HSET', job, 'standIn', 'eventwire')
      redis.call('RPUSH', KEYS[2], job)
    else
      answers[at] = 0
      admit(id)
    end
  end
end
admitted()
return answers
`

// Deletes the stand-ins SEEN made (KEYS[1], the list of their keys) once the adds have run.
const RELEASE_LUA = `
local held = redis.call('LRANGE', KEYS[1], 0, -1)
if #held == 0 then return 0 end
for _, key in ipairs(held) do redis.call('DEL', key) end
redis.call('DEL', KEYS[1])
return #held
`

const OUTCOMES: readonly StoreOutcome[] = ['queued', 'duplicate', 'dead-letter']

/**
 * Stores events as BullMQ jobs, each id once, and says what Redis already had of each: one
 * transaction (MULTI) holds a read of every id and then BullMQ's own add of every job.
 *
 * BullMQ's add of an id whose job exists is a no-op that answers like a new one; the read before it
 * tells them apart, and makes the add of an id remembered after delivery a no-op too (see SEEN_LUA).
 * A repeat of an id within `events` answers as its first copy did, but for a first copy stored
 * now: the repeat is a duplicate of it. The window after delivery is the
 * worker's to write, when it delivers: a waiting job costs Redis nothing for it.
 *
 * The transaction is one round trip, and all or nothing: a connection lost before `EXEC` stores
 * none of the events.
 */
export async function storeOnce(
  queue: StoredJobQueue<WebhookJobData>,
  events: readonly EventToStore[],
  options: StoreOptions,
): Promise<StoreOutcome[]> {
  const client = await queue.backend.client
  defineScripts(client)
  /** Each event id's position in `jobs`. */
  const positions = new Map<string, number>()
  /** Indexes (in `events`) of events whose id came earlier in `events`. */
  const repeats = new Set<number>()
  const jobs: StoredJob<WebhookJobData>[] = []
  const { removeOnFail, dedupWindowMs: window } = options
  const jobIds = events.map((event) => jobIdOf(event.eventId, event.destination))
  for (const [index, event] of events.entries()) {
    const jobId = jobIds[index] as string
    if (positions.has(jobId)) {
      repeats.add(index)
      continue
    }
    positions.set(jobId, jobs.length)
    const { eventId, body, destination } = event
    jobs.push(
      new StoredJob<WebhookJobData>(
        queue,
        'deliver',
        {
          eventId,
          body,
          ...(destination === undefined ? {} : { destination }),
          ...(window === undefined ? {} : { dedupWindowMs: window }),
          ...(event.replay === true ? { replayed: true as const } : {}),
        },
        // removeOnFail only when not the workers' default (see WebhookWorker).
        removeOnFail === undefined
          ? { jobId, removeOnComplete: true }
          : { jobId, removeOnComplete: true, removeOnFail },
        jobId,
      ),
    )
  }
  const keys = queue.keys
  const multi = client.multi()
  const held = `${keys['']}eventwire-held`
  const parked = parkedNowKey((keys[''] as string).slice(0, -1))
  const idsAndHashes: (string | number)[] = []
  for (const job of jobs)
    idsAndHashes.push(job.id as string, job.data.replayed === true ? -1 : shardHash(job.id as string))
  multi.runCommand(SEEN, [keys.failed, held, parked, keys[''], `${keys.de}:`, ...idsAndHashes])
  // Each add is queued on the transaction before its promise settles; none is sent before exec().
  await Promise.all(jobs.map((job) => job.addJob(multi)))
  multi.runCommand(RELEASE, [held])
  // Last: what SEEN parked behind its destination's backlog leaves the wait list the adds put it on.
  multi.runCommand(PARK, [keys.wait as string, parked])
  const replies = await multi.exec()
  if (replies === null) throw new Error('Redis discarded the transaction that stores the events.')
  for (const [error] of replies) if (error) throw error
  const seen = replies[0]?.[1] as number[]
  return events.map((_event, index) => {
    const first = OUTCOMES[seen[positions.get(jobIds[index] as string) as number] as number] as StoreOutcome
    // A dead letter's id is a dead letter in every copy; an id found in flight, a duplicate in every copy.
    return repeats.has(index) && first === 'queued' ? 'duplicate' : first
  })
}

/** Defines the scripts once per connection (BullMQ defines its own scripts on it the same way). */
function defineScripts(client: IRedisClient): void {
  definePark(client)
  if (SEEN in client) return
  client.defineCommand(SEEN, { numberOfKeys: 3, lua: SEEN_LUA })
  client.defineCommand(RELEASE, { numberOfKeys: 1, lua: RELEASE_LUA })
}
