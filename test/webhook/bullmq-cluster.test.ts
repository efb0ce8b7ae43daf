// Durable delivery on a real Redis Cluster (three masters with a replica each, on loopback): a
// round trip through two producers and two workers, the prefix rule, and a master killed with
// SIGKILL in the middle of a run, counting what was lost and what arrived twice.
import { Cluster } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { OptionsError } from '../../src/core/errors/options-error.js'
import { ReplicaAckError, WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import { slotOf } from '../../src/webhook/bullmq/cluster-slot.js'
import { FAIR_WINDOW } from '../../src/webhook/bullmq/fair-queueing.js'
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js'
import { isInstalled, REDIS, REDIS_CLI } from '../helpers/services.js'
import { startSink, type Sink } from '../helpers/sink.js'

const withCluster = isInstalled(REDIS.executable) && isInstalled(REDIS_CLI.executable)
/** The hash tag every queue here uses, and the slot all of its keys are in. */
const PREFIX = '{ew}'
const SLOT = slotOf('ew')

let cluster: RedisCluster
const open: Array<{ close(): Promise<void> } | { disconnect(): void }> = []
beforeAll(async () => {
  if (withCluster) cluster = await startRedisCluster({ nodeTimeoutMs: 1_000 })
}, 60_000)
afterAll(async () => {
  if (withCluster) await cluster.dispose()
})
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => ('close' in item ? item.close() : item.disconnect())))
})

/** An ioredis Cluster client of the test cluster; `blocking` for a worker (BullMQ requires `maxRetriesPerRequest: null`). */
function connect(blocking = false): Cluster {
  const client = new Cluster([...cluster.startupNodes], {
    redisOptions: blocking ? { maxRetriesPerRequest: null } : {},
  })
  open.push(client)
  return client
}

/** A receiver that answers 200 and counts each event's deliveries by `Webhook-Id`. */
async function countingReceiver(): Promise<{ sink: Sink; deliveries: Map<string, number> }> {
  const deliveries = new Map<string, number>()
  const sink = await startSink((request) => {
    const id = String(request.headers['webhook-id'])
    deliveries.set(id, (deliveries.get(id) ?? 0) + 1)
    return { status: 200 }
  })
  open.push(sink)
  return { sink, deliveries }
}

function queue(
  name: string,
  options: { waitForReplicas?: { count: number; timeoutMs?: number } | undefined } = {},
): WebhookQueue {
  const created = new WebhookQueue({
    connection: connect(),
    name,
    prefix: PREFIX,
    enqueueTimeout: 3_000,
    ...options,
  })
  created.on('error', () => undefined)
  open.push(created)
  return created
}

async function worker(name: string, url: string): Promise<WebhookWorker> {
  const created = new WebhookWorker(
    { webhooks: [{ url }], backoff: () => 50 },
    // Short locks: a job whose worker lost it in the failover comes back within seconds.
    { connection: connect(true), name, prefix: PREFIX, concurrency: 50, lockDuration: 2_000, stalledInterval: 1_000 },
  )
  created.on('error', () => undefined)
  open.push(created)
  await created.ready()
  return created
}

const event = (id: string) => ({ type: 'identify', userId: 'u1', messageId: id }) as const

describe.runIf(withCluster)('durable delivery on a Redis Cluster', () => {
  it('puts every key of a hash-tagged queue in one slot, the one cluster-slot.ts computes', async () => {
    const client = connect()
    expect(await client.cluster('KEYSLOT', `${PREFIX}:anything:1`)).toBe(SLOT)
  })

  it('delivers every event from two producers through two workers, each once, more than a window of them parked first', async () => {
    const { sink, deliveries } = await countingReceiver()
    const producers = [queue('round-trip'), queue('round-trip')]
    await Promise.all([worker('round-trip', sink.url), worker('round-trip', sink.url)])
    const ids = Array.from({ length: FAIR_WINDOW + 300 }, (_, index) => `rt-${index}`)
    const results = await Promise.all(ids.map((id, index) => producers[index % 2]?.enqueue(event(id))))
    expect(results.every((result) => result?.status === 'queued')).toBe(true)
    await expect.poll(() => deliveries.size, { timeout: 20_000 }).toBe(ids.length)
    expect([...deliveries.values()].every((count) => count === 1)).toBe(true)
    expect(await producers[0]?.counts()).toMatchObject({ waiting: 0, delayed: 0, failed: 0 })
  })

  it("routes to the registry's destinations, whose scripts write and read their keys on the queue slot", async () => {
    const [a, b] = await Promise.all([countingReceiver(), countingReceiver()])
    const producer = queue('destinations')
    await producer.destinations.set({ id: 'a', webhooks: [{ url: a.sink.url }] })
    await producer.destinations.set({ id: 'b', webhooks: [{ url: b.sink.url }] })
    expect((await producer.destinations.disable('b'))?.enabled).toBe(false)
    expect(await producer.destinations.enable('b')).toMatchObject({ enabled: true })
    expect((await producer.destinations.list()).destinations.map((destination) => destination.id)).toEqual(['a', 'b'])
    const fleetWorker = new WebhookWorker(
      { backoff: () => 50 },
      { connection: connect(true), name: 'destinations', prefix: PREFIX, concurrency: 20 },
    )
    fleetWorker.on('error', () => undefined)
    open.push(fleetWorker)
    await fleetWorker.ready()
    for (const id of ['e1', 'e2']) {
      await producer.enqueue(event(id), { destination: 'a' })
      await producer.enqueue(event(id), { destination: 'b' })
    }
    await expect.poll(() => a.deliveries.size + b.deliveries.size, { timeout: 20_000 }).toBe(4)
    expect([...a.deliveries.keys()].sort()).toEqual(['e1', 'e2'])
    expect([...b.deliveries.keys()].sort()).toEqual(['e1', 'e2'])
    expect(await producer.destinations.delete('a')).toBe(true)
  })

  it('counts the events a breaker holds back, per URL, through the scripts that read and write them on the queue slot', {
    timeout: 60_000,
  }, async () => {
    let up = false
    const sink = await startSink(() => ({ status: up ? 200 : 503 }))
    open.push(sink)
    const producer = queue('held')
    const held = new WebhookWorker(
      { webhooks: [{ url: sink.url }], backoff: () => 120_000, breaker: { failures: 2, coolDownMs: 4_000 } },
      { connection: connect(true), name: 'held', prefix: PREFIX, concurrency: 1 },
    )
    held.on('error', () => undefined)
    open.push(held)
    await held.ready()
    await producer.enqueueBulk(Array.from({ length: 6 }, (_, index) => event(`held-${index}`)))
    await expect
      .poll(
        async () => {
          const counts = await producer.counts()
          return counts.delayed === 6 && counts.heldByBreaker > 0 ? counts.urls : undefined
        },
        { timeout: 20_000, interval: 50 },
      )
      .toEqual([{ url: `${sink.url}/`, heldByBreaker: expect.any(Number), heldForSlots: 0 }])
    up = true
    await expect
      .poll(
        async () => {
          const counts = await producer.counts()
          return counts.urls.length === 0 && counts.waiting + counts.active === 0
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe(true)
    // Closed before its connection: the afterEach drops every connection at once.
    await held.close()
  })

  it('refuses, at once, a prefix without a hash tag on a real cluster, naming the prefix to use', () => {
    const refusal = (() => {
      try {
        new WebhookQueue({ connection: connect(), name: 'untagged' })
      } catch (error) {
        return error
      }
    })()
    expect(refusal).toBeInstanceOf(OptionsError)
    expect((refusal as Error).message).toContain('"{bull}"')
    expect(
      () =>
        new WebhookWorker({ webhooks: [{ url: 'http://127.0.0.1:1' }] }, { connection: connect(true), prefix: 'ew' }),
    ).toThrow(/"\{ew\}"/)
  })

  it('with waitForReplicas, resolves enqueue() once the replica of the master holding the queue has it', async () => {
    const producer = queue('replicated', { waitForReplicas: { count: 1, timeoutMs: 2_000 } })
    expect((await producer.enqueue(event('replicated-1'))).status).toBe('queued')
    // Two replicas are more than this master has: the primary stores it, and enqueue() says it may not survive.
    const greedy = queue('replicated', { waitForReplicas: { count: 2, timeoutMs: 200 } })
    const failure = await greedy.enqueue(event('replicated-2')).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ReplicaAckError)
    expect(failure).toMatchObject({ code: 'ERR_NOT_REPLICATED', acknowledged: 1, required: 2, timeoutMs: 200 })
    expect((await producer.counts()).waiting).toBe(2)
  })
})

/** What one run of {@link failover} saw. */
interface FailoverRun {
  /** Events `enqueue()` resolved as queued. */
  readonly acknowledged: number
  /** Acknowledged events never delivered. */
  readonly lost: number
  /** Deliveries beyond the first of an event (receivers de-duplicate on Webhook-Id). */
  readonly duplicates: number
  /** enqueue() calls that rejected, each retried with the same messageId. */
  readonly rejected: number
  /** From the SIGKILL until the replica was master of the queue's slot (ms). */
  readonly failoverMs: number
}

/**
 * Two producers enqueue `total` events, 25 at a time each, retrying a rejected enqueue with the
 * same messageId as the docs advise; two workers deliver them. Once a quarter are acknowledged,
 * the master holding the queue's slot is killed with SIGKILL; once its replica has taken over, it
 * is started again (it comes back as that replica's replica). Then every event is counted at the
 * receiver.
 */
async function failover(name: string, total: number, waitForReplicas?: { count: number; timeoutMs: number }) {
  await cluster.settled()
  const { sink, deliveries } = await countingReceiver()
  const producers = [queue(name, { waitForReplicas }), queue(name, { waitForReplicas })]
  await Promise.all([worker(name, sink.url), worker(name, sink.url)])
  const victim = await cluster.masterOf(SLOT)
  const acknowledged = new Set<string>()
  let rejected = 0
  let killed: Promise<number> | undefined

  const kill = async () => {
    const at = Date.now()
    await victim.server.stop('SIGKILL')
    while ((await cluster.masterOf(SLOT)) === victim) await new Promise((resolve) => setTimeout(resolve, 50))
    const failoverMs = Date.now() - at
    await victim.server.restart()
    return failoverMs
  }
  const lane = async (producer: WebhookQueue, ids: string[]) => {
    for (const id of ids) {
      for (;;) {
        try {
          // 'duplicate': an earlier try that rejected had stored it after all.
          const { status } = await producer.enqueue(event(id))
          if (status === 'queued' || status === 'duplicate') break
        } catch {
          rejected++
          // A producer's own pace of retries while the cluster fails over.
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      }
      acknowledged.add(id)
      if (acknowledged.size >= total / 4) killed ??= kill()
    }
  }
  const lanes = Array.from({ length: 50 }, (_, index) =>
    lane(
      producers[index % 2] as WebhookQueue,
      Array.from({ length: total / 50 }, (_, step) => `${name}-${index}-${step}`),
    ),
  )
  await Promise.all(lanes)
  const failoverMs = await (killed ?? kill())
  await cluster.settled()
  // Done when nothing is left in Redis: a job whose worker lost it in the failover comes back as stalled.
  await expect
    .poll(
      async () => {
        const counts = await (producers[0] as WebhookQueue).counts()
        return counts.waiting + counts.delayed + counts.active
      },
      { timeout: 30_000, interval: 200 },
    )
    .toBe(0)
  const run: FailoverRun = {
    acknowledged: acknowledged.size,
    lost: [...acknowledged].filter((id) => !deliveries.has(id)).length,
    duplicates: [...deliveries.values()].reduce((sum, count) => sum + count - 1, 0),
    rejected,
    failoverMs,
  }
  console.info(`failover ${name}: ${JSON.stringify(run)}`)
  return run
}

describe.runIf(withCluster)('a master killed during a run, its replica failing over', () => {
  it('loses nothing acknowledged with waitForReplicas: 1', async () => {
    const run = await failover('failover-replicated', 2_000, { count: 1, timeoutMs: 500 })
    expect(run.acknowledged).toBe(2_000)
    expect(run.lost).toBe(0)
  }, 90_000)

  it('without it, delivers what the replica had (the window is measured, not asserted)', async () => {
    const run = await failover('failover-plain', 2_000)
    expect(run.acknowledged).toBe(2_000)
    expect(run.lost).toBeLessThan(run.acknowledged)
  }, 90_000)
})

describe.runIf(withCluster)('strict durability across a failover', () => {
  it('refuses enqueue() once a replica without the append-only file takes the queue over, and stores once it has it', async () => {
    await cluster.settled()
    const victim = await cluster.masterOf(SLOT)
    const heir = await cluster.replicaOf(victim)
    await cluster.command(heir, 'CONFIG', 'SET', 'appendonly', 'no')
    const producer = queue('strict-failover')
    await producer.ready()
    // Connection errors are 'error' events too while the master is down: wait for the refusal.
    const refused = new Promise<Error>((resolve) =>
      producer.on('error', (error) => {
        if (error instanceof OptionsError) resolve(error)
      }),
    )
    await victim.server.stop('SIGKILL')
    // ioredis reads the slots again when a command fails, so the producer learns of the failover
    // from its next enqueues; the first to reach the new master may be stored before the check answers.
    let attempt = 0
    await expect
      .poll(
        () =>
          producer.enqueue(event(`strict-failover-${++attempt}`)).then(
            () => 'queued',
            (error: unknown) => (error instanceof OptionsError ? 'refused' : 'not stored'),
          ),
        { timeout: 20_000, interval: 100 },
      )
      .toBe('refused')
    expect((await refused).message).toMatch(/WebhookQueue: it has appendonly no/)

    await cluster.command(heir, 'CONFIG', 'SET', 'appendonly', 'yes')
    await victim.server.restart()
    await cluster.settled()
    // While refused, the queue checks the master holding its slot again every second.
    await expect
      .poll(
        () =>
          producer.enqueue(event('strict-failover-fixed')).then(
            (result) => result.status,
            (error: Error) => error.message,
          ),
        { timeout: 20_000, interval: 250 },
      )
      .toBe('queued')
  }, 60_000)
})
