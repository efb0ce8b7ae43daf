import { Queue } from 'bullmq'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { WebhookQueue, type WebhookQueueOptions } from '../../src/webhook/bullmq/index.js'
import { redisForFile } from '../helpers/redis-suite.js'

// The producer writes each job with its own script, not BullMQ's add (one script call for a whole
// batch costs Redis and Node a fraction of one add per event). What it writes must be what BullMQ's
// add writes for the same job: these tests store the same events both ways, in two queues of one
// Redis, and compare every key BullMQ keeps. They fail when a BullMQ upgrade changes its layout.

const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

let queues = 0
const connection = () => ({ host: '127.0.0.1', port: redis.server.port })

/** A producer and a bare BullMQ queue, each on a queue of its own. */
function pair(options: Partial<WebhookQueueOptions> = {}): {
  ours: WebhookQueue
  bare: Queue
  names: [string, string]
} {
  const names: [string, string] = [`store-ours-${++queues}`, `store-bare-${queues}`]
  const ours = new WebhookQueue({ connection: connection(), name: names[0], durability: 'best-effort', ...options })
  const bare = new Queue(names[1], { connection: connection() })
  open.push(ours, bare)
  return { ours, bare, names }
}

const track = (messageId: string) => ({ type: 'track' as const, userId: 'u1', event: 'Paid', messageId })

/** Adds with BullMQ what `ours` stored under each job id, with the same data and options. */
async function addBare(bare: Queue, ourName: string, jobIds: string[]): Promise<void> {
  for (const jobId of jobIds) {
    const job = await redis.raw.hgetall(`bull:${ourName}:${jobId}`)
    await bare.add(job.name as string, JSON.parse(job.data as string), JSON.parse(job.opts as string))
  }
}

/**
 * What a queue holds in BullMQ's keys, with the queue's name taken out of them and what differs
 * by nature (stream entry ids, times) left out: jobs field by field (options parsed: Lua's
 * encoder orders keys as it likes), lists and sets in order, the events' fields.
 */
async function bullmqState(name: string, jobIds: string[]): Promise<Record<string, unknown>> {
  const key = (suffix: string) => `bull:${name}:${suffix}`
  const jobs: Record<string, unknown> = {}
  for (const jobId of jobIds) {
    const { opts, timestamp, ...fields } = await redis.raw.hgetall(key(jobId))
    expect(timestamp).toMatch(/^\d{13}$/)
    jobs[jobId] = { ...fields, opts: opts === undefined ? undefined : JSON.parse(opts) }
  }
  return {
    jobs,
    wait: await redis.raw.lrange(key('wait'), 0, -1),
    marker: await redis.raw.zrange(key('marker'), '0', '-1', 'WITHSCORES'),
    maxLenEvents: await redis.raw.hget(key('meta'), 'opts.maxLenEvents'),
    paused: await redis.raw.hget(key('meta'), 'paused'),
    id: await redis.raw.get(key('id')),
    events: (await redis.raw.xrange(key('events'), '-', '+')).map(([, fields]) => fields),
  }
}

describe('the producer stores a job as BullMQ add stores it', () => {
  it('writes the job, the wait list, the marker, the counter and the events of BullMQ add, and its duplicated event', async () => {
    const { ours, bare, names } = pair()
    await ours.enqueueBulk([track('m-1'), track('m/2'), track('m-1')])
    const jobIds = ['evt-m-1', 'evt-m%2F2']
    await addBare(bare, names[0], jobIds)
    // A second time: both answer with a 'duplicated' event and write nothing else.
    expect((await ours.enqueue(track('m-1'))).status).toBe('duplicate')
    await bare.add('deliver', {}, { jobId: 'evt-m-1' })
    const state = await bullmqState(names[0], jobIds)
    expect(state).toEqual(await bullmqState(names[1], jobIds))
    expect(state.wait).toEqual(['evt-m%2F2', 'evt-m-1'])
    // The name every eventwire job has had: a worker of any version takes it.
    expect((state.jobs as Record<string, { name: string }>)['evt-m-1']?.name).toBe('deliver')
    expect(state.marker).toEqual(['0', '0'])
    expect((state.events as string[][]).map((fields) => fields[1])).toEqual([
      'added',
      'waiting',
      'added',
      'waiting',
      'duplicated',
    ])
  })

  it('writes the retention of a producer whose deadLetters differ from the default into the options, as BullMQ add does', async () => {
    const { ours, bare, names } = pair({ deadLetters: { maxAgeMs: 60_000, maxCount: 10 } })
    await ours.enqueue(track('kept'))
    await addBare(bare, names[0], ['evt-kept'])
    const state = await bullmqState(names[0], ['evt-kept'])
    expect(state).toEqual(await bullmqState(names[1], ['evt-kept']))
    expect((state.jobs as Record<string, { opts: unknown }>)['evt-kept']?.opts).toEqual({
      jobId: 'evt-kept',
      removeOnComplete: true,
      removeOnFail: { age: 60, count: 10 },
      attempts: 0,
    })
  })

  it('wakes no worker of a paused queue, as BullMQ add does not', async () => {
    const { ours, bare, names } = pair()
    await ours.ready()
    const oursAsBullmq = new Queue(names[0], { connection: connection() })
    open.push(oursAsBullmq)
    await oursAsBullmq.pause()
    await bare.pause()
    await ours.enqueue(track('held'))
    await addBare(bare, names[0], ['evt-held'])
    const state = await bullmqState(names[0], ['evt-held'])
    expect(state).toEqual(await bullmqState(names[1], ['evt-held']))
    expect(state.paused).toBe('1')
    expect(state.marker).toEqual([])
    expect(state.wait).toEqual(['evt-held'])
  })

  it("stamps a job with Redis's time, not the producer's clock", async () => {
    const { ours, names } = pair()
    await ours.ready()
    const redisMs = async () => {
      const [seconds, micros] = await redis.raw.time()
      return Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000)
    }
    const before = await redisMs()
    // A producer whose clock is an hour slow.
    const now = vi.spyOn(Date, 'now').mockReturnValue(before - 3_600_000)
    try {
      await ours.enqueue(track('stamped'))
    } finally {
      now.mockRestore()
    }
    const after = await redisMs()
    const timestamp = Number(await redis.raw.hget(`bull:${names[0]}:evt-stamped`, 'timestamp'))
    expect(timestamp).toBeGreaterThanOrEqual(before)
    expect(timestamp).toBeLessThanOrEqual(after)
  })
})
