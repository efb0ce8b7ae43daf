// waitForReplicas: enqueue() resolves once a replica has the event (Redis's WAIT, on the connection
// that wrote it), and says so with a typed error when none confirms. On a single Redis with a
// replica here; on a Redis Cluster in bullmq-cluster.test.ts.
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { ReplicaAckError, WebhookQueue } from '../../src/webhook/bullmq/index.js'
import { jobIdOf } from '../../src/webhook/bullmq/job-data.js'
import { ReplicaAck } from '../../src/webhook/bullmq/replica-ack.js'
import type { RedisServer } from '../helpers/redis.js'
import { redisPerTest } from '../helpers/redis-suite.js'
import { isInstalled, REDIS } from '../helpers/services.js'

const withRedis = isInstalled(REDIS.executable)
const { open, redisWith } = redisPerTest()

function client(port: number): Redis {
  const redis = new Redis({ host: '127.0.0.1', port })
  // Expected while a test has the server stopped; ioredis reconnects.
  redis.on('error', () => undefined)
  open.push({ close: async () => redis.disconnect() })
  return redis
}

/** A primary with the append-only file on and one replica of it, linked. */
async function primaryWithReplica(): Promise<{ primary: RedisServer; replica: RedisServer; replicaClient: Redis }> {
  const primary = await redisWith({
    persistent: true,
    appendfsync: 'everysec',
    // A replica's first sync at once (Redis waits 5 s for more replicas by default), and a stop
    // that does not wait for the replica to catch up (up to 10 s by default).
    args: ['--repl-diskless-sync-delay', '0', '--shutdown-timeout', '0'],
  })
  const replica = await redisWith({
    persistent: true,
    appendfsync: 'everysec',
    // Redis refuses SIGTERM while it writes its first AOF after a sync ("Writing initial AOF, can't exit").
    args: ['--replicaof', '127.0.0.1', String(primary.port), '--shutdown-on-sigterm', 'force'],
  })
  const replicaClient = client(replica.port)
  await linked(replicaClient)
  return { primary, replica, replicaClient }
}

/** Resolves once the replica says its link to the primary is up. */
async function linked(replica: Redis): Promise<void> {
  await expect
    .poll(async () => /master_link_status:up/.test(await replica.info('replication')), { timeout: 10_000 })
    .toBe(true)
}

/**
 * A queue that waits `timeoutMs` for one replica: short where no replica can answer, long where
 * one must (a replica fresh from its first sync, on a loaded machine, may take a while to ack).
 */
function queueOn(port: number, timeoutMs = 300): WebhookQueue {
  const waitForReplicas = { count: 1, timeoutMs }
  const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port }, name: 'replicated', waitForReplicas })
  queue.on('error', () => undefined)
  open.push(queue)
  return queue
}

const event = (messageId?: string) =>
  ({ type: 'identify', userId: 'u1', ...(messageId === undefined ? {} : { messageId }) }) as const

describe.runIf(withRedis)('waitForReplicas on a Redis with one replica', () => {
  it('resolves once the replica has the job', async () => {
    const { primary, replicaClient } = await primaryWithReplica()
    const queue = queueOn(primary.port, 5_000)
    expect(await queue.enqueue(event('m1'))).toEqual({ eventId: 'm1', status: 'queued' })
    // Read at once from the replica: WAIT said it had the write, so it is there, not on its way.
    expect(await replicaClient.exists(`bull:replicated:${jobIdOf('m1')}`)).toBe(1)
  })

  it('rejects with ReplicaAckError when no replica confirms, and stores the event once when enqueued again', async () => {
    const { primary, replica, replicaClient } = await primaryWithReplica()
    const queue = queueOn(primary.port, 1_000)
    await replica.stop()

    const failure = await queue.enqueue(event('m2')).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ReplicaAckError)
    expect(failure).toMatchObject({ code: 'ERR_NOT_REPLICATED', acknowledged: 0, required: 1, timeoutMs: 1_000 })
    expect((failure as Error).message).toBe(
      'Event "m2" is stored on the Redis primary, but 0 of the 1 replica asked for (waitForReplicas) confirmed it within 1000 ms: it may or may not survive a failover. Check the replicas (INFO replication on the primary), then enqueue it again with the same messageId: that is safe, the same messageId is stored once.',
    )
    expect((await queue.counts()).waiting).toBe(1)

    await replica.restart()
    await linked(replicaClient)
    // The first try reached the primary: Redis has it, and now so does the replica.
    expect((await queue.enqueue(event('m2'))).status).toBe('duplicate')
    expect((await queue.counts()).waiting).toBe(1)
    expect(await replicaClient.exists(`bull:replicated:${jobIdOf('m2')}`)).toBe(1)
  })

  it('advises a messageId before a retry for an event without one', async () => {
    const primary = await redisWith({ persistent: true, appendfsync: 'everysec' })
    const failure = await queueOn(primary.port)
      .enqueue(event())
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ReplicaAckError)
    expect((failure as Error).message).toMatch(/give events a messageId before enqueueing them again/)
  })

  it('waits for the replicas of enqueueBulk() once for all its events, and says how many were not confirmed', async () => {
    const primary = await redisWith({ persistent: true, appendfsync: 'everysec' })
    const queue = queueOn(primary.port)
    const failure = await queue.enqueueBulk([event('b1'), event('b2'), event('b3')]).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ReplicaAckError)
    expect((failure as Error).message).toMatch(
      /^3 events are stored on the Redis primary, but 0 of the 1 replica .*enqueue them again with the same messageIds/,
    )
    expect((await queue.counts()).waiting).toBe(3)
  })

  it('names Redis refusing WAIT, and the server-side setting to use instead', async () => {
    const primary = await redisWith({
      persistent: true,
      appendfsync: 'everysec',
      args: ['--rename-command', 'WAIT', ''],
    })
    const failure = await queueOn(primary.port)
      .enqueue(event('m3'))
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ReplicaAckError)
    expect((failure as Error).message).toMatch(/Redis refused WAIT \(ERR unknown command .*min-replicas-to-write/)
    expect((failure as Error).cause).toMatchObject({ name: 'ReplyError' })
  })
})

/** A fake connection: answers WAIT with `replicas` after a turn of the event loop, and counts the WAITs. */
function fakeConnection(replicas: number) {
  const connection = {
    stream: {} as unknown,
    waits: 0,
    async call(command: string) {
      expect(command).toBe('WAIT')
      connection.waits++
      await new Promise((resolve) => setImmediate(resolve))
      return replicas
    },
  }
  return connection
}

describe('ReplicaAck', () => {
  it('sends one WAIT for the writes that finished together, as those of one transaction do', async () => {
    const connection = fakeConnection(1)
    const ack = new ReplicaAck({ count: 1, timeoutMs: 100 }, 'bull')
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => ack.confirm(connection, async () => index, [`e${index}`], true)),
    )
    expect(results).toEqual(Array.from({ length: 20 }, (_, index) => index))
    expect(connection.waits).toBe(1)
  })

  it('sends one more WAIT for the writes that finished while one was out (a group commit)', async () => {
    const connection = fakeConnection(1)
    const ack = new ReplicaAck({ count: 1, timeoutMs: 100 }, 'bull')
    const together = Array.from({ length: 20 }, (_, index) =>
      ack.confirm(connection, async () => index, [`e${index}`], true),
    )
    // Twenty more, whose writes finish while the first WAIT is out.
    await new Promise((resolve) => queueMicrotask(() => resolve(undefined)))
    const later = Array.from({ length: 20 }, (_, index) =>
      ack.confirm(connection, async () => 20 + index, [`f${index}`], true),
    )
    expect(await Promise.all([...together, ...later])).toEqual(Array.from({ length: 40 }, (_, index) => index))
    expect(connection.waits).toBe(2)
  })

  it('refuses to vouch for a write when the connection changed before its WAIT: WAIT would not cover it', async () => {
    const connection = fakeConnection(1)
    const ack = new ReplicaAck({ count: 1, timeoutMs: 100 }, 'bull')
    const reconnecting = async () => {
      connection.stream = {}
    }
    const failure = await ack.confirm(connection, reconnecting, ['e1'], true).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ReplicaAckError)
    expect((failure as Error).message).toMatch(/connection to the primary holding it changed .* may or may not survive/)
    expect(connection.waits).toBe(0)
  })
})
