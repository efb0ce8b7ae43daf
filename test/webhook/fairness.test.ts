// Fair queueing between destinations: each destination has at most FAIR_WINDOW events in the line
// the workers take from; the rest of its backlog is parked in a line of its own and moves up as
// the workers take its events. Another destination's event so waits behind at most a window of
// each backlog, never behind the whole of it.
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { FAIR_WINDOW, FairQueueing, SWEEP_MS, partyOfJob } from '../../src/webhook/bullmq/fair-queueing.js'
import { jobIdOf } from '../../src/webhook/bullmq/job-data.js'
import { WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import { ended } from '../helpers/ended.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Sink } from '../helpers/sink.js'

const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

const event = (id: string) => ({
  type: 'track' as const,
  userId: 'u1',
  event: 'Paid',
  messageId: id,
  properties: { id },
})
const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}${index}`)
let queues = 0

describe('parties', () => {
  it('are the destination, or the empty name for the workers own webhooks, read from a job id', () => {
    expect(partyOfJob(jobIdOf('m/1', 'acme.eu'))).toBe('acme.eu')
    expect(partyOfJob(jobIdOf('dst-x/1'))).toBe('')
    expect(partyOfJob('dst-no-slash')).toBe('')
  })
})

describe.runIf(redis.available)('fair queueing between destinations', () => {
  const connection = () => ({ host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null })
  async function sink(): Promise<Sink> {
    const started = await startSink()
    open.push(started)
    return started
  }
  /** A queue of its own with destinations `a` and `b`, each sending to `to`. */
  async function queueFor(to: Sink) {
    const name = `fair-${queues++}`
    const queue = new WebhookQueue({ connection: connection(), name })
    open.push(queue)
    for (const id of ['a', 'b']) await queue.destinations.set({ id, webhooks: [{ url: `${to.url}/${id}` }] })
    return { queue, name }
  }
  /** One worker taking one job at a time, so that deliveries arrive in the order jobs are taken. */
  async function worker(name: string, settings: object = {}) {
    const started = new WebhookWorker(
      { ...settings, timeoutMs: 2_000 },
      { connection: connection(), name, concurrency: 1 },
    )
    open.push(started)
    await started.ready()
    return started
  }
  /** A Redis client of the test's own, and the keys of queue `name`. */
  function direct(name: string) {
    const client = new Redis(connection())
    open.push({ close: async () => void client.disconnect() })
    return { client, base: `bull:${name}` }
  }
  /** A worker's side of fair queueing on `client`, for the queue under `base`. */
  const fairFor = (client: Redis, base: string) =>
    new FairQueueing(
      client as never,
      { base, wait: `${base}:wait`, marker: `${base}:marker`, meta: `${base}:meta`, active: `${base}:active` },
      (error) => {
        throw error
      },
    )
  /** Destination `a` of a queue of its own with `count` events, all but the window parked; a client of the test's own. */
  async function backlog(count: number) {
    const { queue, name } = await queueFor(await sink())
    await queue.enqueueBulk(ids('a', count).map(event), { destination: 'a' })
    return { queue, ...direct(name) }
  }
  const received = (to: Sink) =>
    to.requests.map((request) => `${request.path.slice(1)}:${JSON.parse(request.body).properties.id}`)

  it("parks a destination's events past the window; another destination's events wait behind one window, not the backlog", async () => {
    const to = await sink()
    const { queue, name } = await queueFor(to)
    const backlog = 2 * FAIR_WINDOW + 50
    const statuses = async (events: ReturnType<typeof event>[], destination: string) =>
      new Set((await queue.enqueueBulk(events, { destination })).map((answer) => answer.status))
    expect(await statuses(ids('a', backlog).map(event), 'a')).toEqual(new Set(['queued']))
    expect(await statuses(ids('b', 3).map(event), 'b')).toEqual(new Set(['queued']))
    expect(await queue.counts()).toMatchObject({ waiting: backlog + 3, parked: backlog - FAIR_WINDOW })

    const fleet = await worker(name)
    await ended(fleet, backlog + 3)
    const order = received(to)
    expect(order).toHaveLength(backlog + 3)
    // Taken one at a time: a's window, then b's events, then a's parked ones, each line in its order.
    expect(order.slice(FAIR_WINDOW, FAIR_WINDOW + 3)).toEqual(['b:b0', 'b:b1', 'b:b2'])
    expect(order.filter((entry) => entry.startsWith('a:'))).toEqual(ids('a', backlog).map((id) => `a:${id}`))
    expect(await queue.counts()).toMatchObject({ waiting: 0, parked: 0, delayed: 0 })
  })

  it('parks in one call what goes past the window, and the workers own webhooks are a party too', async () => {
    const to = await sink()
    const { queue, name } = await queueFor(to)
    // One bulk call straddling the window: the first FAIR_WINDOW wait for a worker, the rest park.
    await queue.enqueueBulk(ids('a', FAIR_WINDOW + 10).map(event), { destination: 'a' })
    await queue.enqueueBulk(ids('own', FAIR_WINDOW + 5).map(event))
    await queue.enqueue(event('b0'), { destination: 'b' })
    expect(await queue.counts()).toMatchObject({ parked: 15 })
    const fleet = await worker(name, { webhooks: [{ url: `${to.url}/own` }] })
    await ended(fleet, 2 * FAIR_WINDOW + 16)
    const order = received(to)
    expect(order.indexOf('b:b0')).toBe(2 * FAIR_WINDOW)
    expect(order.filter((entry) => entry.startsWith('own:'))).toEqual(
      ids('own', FAIR_WINDOW + 5).map((id) => `own:${id}`),
    )
  })

  it('answers duplicate for a parked event and stores it once', async () => {
    const to = await sink()
    const { queue, name } = await queueFor(to)
    await queue.enqueueBulk(ids('a', FAIR_WINDOW + 2).map(event), { destination: 'a' })
    const last = `a${FAIR_WINDOW + 1}`
    expect(await queue.enqueue(event(last), { destination: 'a' })).toMatchObject({ status: 'duplicate' })
    const again = await queue.enqueueBulk([event('a0'), event('new')], { destination: 'a' })
    expect(again.map((answer) => answer.status)).toEqual(['duplicate', 'queued'])
    expect(await queue.counts()).toMatchObject({ waiting: FAIR_WINDOW + 3, parked: 3 })
    const fleet = await worker(name)
    await ended(fleet, FAIR_WINDOW + 3)
    expect(received(to).filter((entry) => entry === `a:${last}`)).toHaveLength(1)
  })

  it("moves up as many parked events as were taken, and parks a new event behind the destination's parked ones", async () => {
    const to = await sink()
    const { queue, name } = await queueFor(to)
    await queue.enqueueBulk(ids('a', FAIR_WINDOW + 10).map(event), { destination: 'a' })
    const { client, base } = direct(name)
    const fair = fairFor(client, base)
    // Five admitted events taken (as a worker would: off the wait list, then reported).
    const taken = await client.lrange(`${base}:wait`, -5, -1)
    await client.ltrim(`${base}:wait`, 0, -6)
    for (const id of taken) fair.taken(id, 'a')
    await fair.stop()
    // Five moved up, five still parked; a new event parks behind them, though the window has room again.
    expect(await client.scard(`${base}:fair:a`)).toBe(FAIR_WINDOW)
    expect(await client.lrange(`${base}:wait`, 0, 4)).toEqual(
      ids('a', FAIR_WINDOW + 5)
        .slice(FAIR_WINDOW)
        .reverse()
        .map((id) => jobIdOf(id, 'a')),
    )
    expect(await client.llen(`${base}:parked:a`)).toBe(5)
    await client.srem(`${base}:fair:a`, jobIdOf(`a${FAIR_WINDOW}`, 'a'))
    await queue.enqueue(event('late'), { destination: 'a' })
    expect(await client.lrange(`${base}:parked:a`, -1, -1)).toEqual([jobIdOf('late', 'a')])
    await client.sadd(`${base}:fair:a`, jobIdOf(`a${FAIR_WINDOW}`, 'a'))
    expect(await queue.counts()).toMatchObject({ parked: 6, waiting: FAIR_WINDOW + 6 })

    const fleet = await worker(name)
    await ended(fleet, FAIR_WINDOW + 6)
    const order = received(to).map((entry) => entry.slice(2))
    expect(order).toEqual([...ids('a', FAIR_WINDOW + 10).slice(5), 'late'])
  })

  it("frees each party's room from one report of both, past a parked event removed from outside", async () => {
    const to = await sink()
    const { queue, name } = await queueFor(to)
    await queue.enqueueBulk(ids('a', FAIR_WINDOW + 3).map(event), { destination: 'a' })
    await queue.enqueueBulk(ids('b', FAIR_WINDOW + 2).map(event), { destination: 'b' })
    const { client, base } = direct(name)
    await client.del(`${base}:${jobIdOf(`a${FAIR_WINDOW}`, 'a')}`)
    const taken = [...ids('a', 3).map((id) => jobIdOf(id, 'a')), ...ids('b', 2).map((id) => jobIdOf(id, 'b'))]
    for (const id of taken) await client.lrem(`${base}:wait`, 1, id)
    const fair = fairFor(client, base)
    for (const id of taken) fair.taken(id, partyOfJob(id))
    await fair.stop()
    // a: three taken, three popped, the one removed skipped; b: two taken, two moved up.
    expect(await client.exists(`${base}:parked:a`, `${base}:parked:b`)).toBe(0)
    expect(await client.scard(`${base}:fair:a`)).toBe(FAIR_WINDOW - 1)
    expect(await client.scard(`${base}:fair:b`)).toBe(FAIR_WINDOW)
    expect(await client.lrange(`${base}:wait`, 0, 3)).toEqual(
      [`a${FAIR_WINDOW + 1}`, `a${FAIR_WINDOW + 2}`, `b${FAIR_WINDOW}`, `b${FAIR_WINDOW + 1}`]
        .map((id) => jobIdOf(id, id.slice(0, 1)))
        .sort((x, y) => (x > y ? -1 : 1)),
    )
    expect(await queue.counts()).toMatchObject({ parked: 0, waiting: 2 * FAIR_WINDOW - 1 })
  })

  it("reports a party's taken events with one SREM, and checks its parked events' jobs with one EXISTS", async () => {
    const { client, base } = await backlog(FAIR_WINDOW + 10)
    const taken = ids('a', 5).map((id) => jobIdOf(id, 'a'))
    for (const id of taken) await client.lrem(`${base}:wait`, 1, id)
    const fair = fairFor(client, base)
    await client.config('RESETSTAT')
    for (const id of taken) fair.taken(id, 'a')
    await fair.stop()
    const stats = await client.info('commandstats')
    const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0)
    expect(await client.llen(`${base}:parked:a`)).toBe(5)
    expect(calls('srem')).toBe(1)
    // The parked list's before the release and after it, and one for the five jobs.
    expect(calls('exists')).toBe(3)
  })

  it('sweeps the queue once an interval, whichever worker comes first, and keeps the ids still waiting', async () => {
    const { client, base } = await backlog(FAIR_WINDOW + 5)
    // Three admitted events taken by a worker whose report never came; one removed from outside.
    const taken = ids('a', 3).map((id) => jobIdOf(id, 'a'))
    for (const id of taken) {
      await client.lrem(`${base}:wait`, 1, id)
      await client.hset(`${base}:${id}`, 'processedOn', Date.now())
    }
    const removed = jobIdOf('a3', 'a')
    await client.lrem(`${base}:wait`, 1, removed)
    await client.del(`${base}:${removed}`)
    await client.set(`${base}:fair-swept`, '1', 'PX', SWEEP_MS)
    const fair = fairFor(client, base)
    // Another worker swept less than an interval ago: nothing is looked at.
    expect(await fair.sweep()).toBe(0)
    expect(await client.scard(`${base}:fair:a`)).toBe(FAIR_WINDOW)
    await client.del(`${base}:fair-swept`)
    expect(await fair.sweep()).toBe(4)
    const ttl = await client.pttl(`${base}:fair-swept`)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(SWEEP_MS)
    expect(await fair.sweep()).toBe(0)
    const admitted = await client.smembers(`${base}:fair:a`)
    expect(admitted).toHaveLength(FAIR_WINDOW)
    for (const id of [...taken, removed]) expect(admitted).not.toContain(id)
    expect(admitted).toContain(jobIdOf('a4', 'a'))
    expect(await client.llen(`${base}:parked:a`)).toBe(1)
  })

  it('sweeps what no worker reported taken, and skips a parked event removed from outside', async () => {
    const to = await sink()
    const { queue, name } = await queueFor(to)
    await queue.enqueueBulk(ids('a', FAIR_WINDOW + 3).map(event), { destination: 'a' })
    const { client, base } = direct(name)
    // The window's events vanish from outside (a dashboard's remove): nobody will report them taken.
    const admitted = await client.smembers(`${base}:fair:a`)
    expect(admitted).toHaveLength(FAIR_WINDOW)
    for (const id of admitted) await client.del(`${base}:${id}`)
    await client.del(`${base}:wait`)
    // One parked event is removed too.
    const [gone] = await client.lrange(`${base}:parked:a`, 0, 0)
    await client.del(`${base}:${gone}`)

    const fair = fairFor(client, base)
    expect(await fair.sweep()).toBe(2)
    expect(await client.scard(`${base}:fair:a`)).toBe(2)
    expect(await client.exists(`${base}:parked:a`)).toBe(0)
    expect(await client.sismember(`${base}:fair-parties`, 'a')).toBe(0)
    expect(await queue.counts()).toMatchObject({ waiting: 2, parked: 0 })
    const fleet = await worker(name)
    await ended(fleet, 2)
    expect(received(to)).toEqual([`a:a${FAIR_WINDOW + 1}`, `a:a${FAIR_WINDOW + 2}`])
    // Closing sends what the worker took and had not reported yet.
    await fleet.close()
    expect(await client.scard(`${base}:fair:a`)).toBe(0)
  })
})
