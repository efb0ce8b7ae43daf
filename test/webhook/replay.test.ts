// Replay: workers given `keepSent` keep each delivered event's id and body per destination, in
// Redis, bounded by count and age; WebhookQueue.replay() sends a time window of them again, each
// once, with its id and body, never beside a job of the same id; entries something else wrote
// there are left out, and keeping never holds up a delivery.
import { createHmac } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { OptionsError } from '../../src/index.js'
import { destinationKey } from '../../src/webhook/bullmq/registry.js'
import {
  eachSent,
  readSentEntry,
  REPLAY_PAGE,
  resolveReplayOptions,
  type SentEvent,
  type SentReadStore,
} from '../../src/webhook/bullmq/replay.js'
import {
  KEEP_SENT_DEFAULTS,
  MAX_KEPT_PER_DESTINATION,
  MAX_UNWRITTEN_BODY_CHARS,
  resolveKeepSent,
  SentBodies,
} from '../../src/webhook/bullmq/sent-bodies.js'
import { StreamWriter, streamWriteLua, type StreamStore } from '../../src/webhook/bullmq/stream-writer.js'
import { UnknownDestinationError, WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import { ended } from '../helpers/ended.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Sink } from '../helpers/sink.js'

const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

const event = (id: string, plan = 'basic') => ({
  type: 'track' as const,
  userId: 'u1',
  event: 'Paid',
  messageId: id,
  properties: { plan },
})

/** A store that records each write and answers at once. */
function recordingStore() {
  const writes: unknown[][] = []
  const defined: Array<{ name: string; lua: string }> = []
  const store = {
    defineCommand(name: string, definition: { lua: string }) {
      defined.push({ name, lua: definition.lua })
      ;(store as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
        writes.push(args)
        return 1
      }
    },
  } as unknown as StreamStore
  return { store, writes, defined }
}
const quiet = { failed: () => undefined, dropped: () => undefined }

describe('keeping what was sent, apart from Redis', () => {
  it('is off unless asked for; true takes the defaults; refuses what it cannot use by name', () => {
    expect(resolveKeepSent(undefined)).toBeUndefined()
    expect(resolveKeepSent(false)).toBeUndefined()
    expect(resolveKeepSent(true)).toEqual(KEEP_SENT_DEFAULTS)
    expect(KEEP_SENT_DEFAULTS).toEqual({ maxEntries: 1_000, maxAgeMs: 86_400_000 })
    expect(resolveKeepSent({ maxEntries: 5 })).toEqual({ maxEntries: 5, maxAgeMs: 86_400_000 })
    expect(resolveKeepSent({ maxAgeMs: 1_000 })).toEqual({ maxEntries: 1_000, maxAgeMs: 1_000 })
    expect(resolveKeepSent({ maxEntries: MAX_KEPT_PER_DESTINATION })?.maxEntries).toBe(100_000)
    expect(() => resolveKeepSent({ maxEntries: MAX_KEPT_PER_DESTINATION + 1 })).toThrow(/keepSent\.maxEntries/)
    expect(() => resolveKeepSent({ maxEntries: 0 })).toThrow(/keepSent\.maxEntries/)
    expect(() => resolveKeepSent({ maxAgeMs: 999 })).toThrow(/keepSent\.maxAgeMs/)
    expect(() => resolveKeepSent('yes')).toThrow(OptionsError)
    expect(() => resolveKeepSent('yes')).toThrow(
      'Invalid option `keepSent`: expected { maxEntries?, maxAgeMs? }, true for the defaults, or false for none.',
    )
    expect(() => resolveKeepSent({ maxCount: 5 })).toThrow(
      'Invalid option `keepSent.maxCount`: no such option; use `maxEntries` instead.',
    )
    expect(() => resolveKeepSent({ count: 5 })).toThrow('`keepSent.count`: no such option; use `maxEntries` instead.')
    expect(() => resolveKeepSent({ retentionMs: 5 })).toThrow(
      '`keepSent.retentionMs`: no such option; use `maxAgeMs` instead.',
    )
  })

  it('checks the window of replay(): since is required, until not before it, names people reach for', () => {
    expect(resolveReplayOptions({ since: 5 })).toEqual({ destination: undefined, since: 5, until: undefined })
    expect(resolveReplayOptions({ destination: 'acme', since: 0, until: 0 })).toEqual({
      destination: 'acme',
      since: 0,
      until: 0,
    })
    expect(() => resolveReplayOptions(undefined)).toThrow(
      'Invalid option `options`: expected { since, until?, destination? }: the window, in epoch ms.',
    )
    expect(() => resolveReplayOptions({})).toThrow(/`since`.*0 for all that is kept/)
    expect(() => resolveReplayOptions({ since: -1 })).toThrow(/`since`/)
    expect(() => resolveReplayOptions({ since: 1.5 })).toThrow(/`since`/)
    expect(() => resolveReplayOptions({ since: 10, until: 9 })).toThrow(
      'Invalid option `until`: is before `since` (9 < 10): give a window that ends after it starts.',
    )
    expect(() => resolveReplayOptions({ since: 10, until: -1 })).toThrow(/`until`/)
    expect(() => resolveReplayOptions({ from: 1 })).toThrow('`from`: no such option; use `since` instead.')
    expect(() => resolveReplayOptions({ start: 1 })).toThrow('`start`: no such option; use `since` instead.')
    expect(() => resolveReplayOptions({ since: 1, to: 2 })).toThrow('`to`: no such option; use `until` instead.')
    expect(() => resolveReplayOptions({ since: 1, end: 2 })).toThrow('`end`: no such option; use `until` instead.')
    expect(() => resolveReplayOptions({ since: 1, destination: 'a/b' })).toThrow(OptionsError)
  })

  it('reads an entry as an event only with a non-empty id and a string body', () => {
    expect(readSentEntry(['e', 'id-1', 'b', '{}'])).toEqual({ eventId: 'id-1', body: '{}' })
    expect(readSentEntry(['b', '', 'e', 'id-1', 'x', 'y'])).toEqual({ eventId: 'id-1', body: '' })
    expect(readSentEntry(['e', '', 'b', '{}'])).toBeUndefined()
    expect(readSentEntry(['e', 'id-1'])).toBeUndefined()
    expect(readSentEntry(['b', '{}'])).toBeUndefined()
    expect(readSentEntry(['e', 1, 'b', '{}'])).toBeUndefined()
    expect(readSentEntry(['e', 'id-1', 'b'])).toBeUndefined()
  })

  it('writes each delivered event as its id and body, per destination, in one command with the bounds', async () => {
    const { store, writes, defined } = recordingStore()
    const sent = new SentBodies('bull:q', { maxEntries: 7, maxAgeMs: 60_000 }, async () => store, quiet)
    sent.record('acme', 'e1', '{"a":1}')
    sent.record(undefined, 'e2', '{"b":2}')
    sent.record('acme', 'e3', '{"c":3}')
    await sent.flush()
    expect(writes).toEqual([
      [2, 'bull:q:sent:acme', 'bull:q:sent', 7, 60_000, 2, 'e1', '{"a":1}', 'e3', '{"c":3}', 1, 'e2', '{"b":2}'],
    ])
    expect(defined.map(({ name }) => name)).toEqual(['eventwireKeepSent'])
    expect(defined[0]?.lua).toBe(streamWriteLua(['e', 'b']))
    expect(defined[0]?.lua).toContain("redis.call('XADD', key, '*', 'e', ARGV[at + 1], 'b', ARGV[at + 2])")
    expect(defined[0]?.lua).toContain('at = at + 2')
  })

  it('cuts writes of large bodies at a megabyte, and drops bodies past its hold, telling how many', async () => {
    vi.useFakeTimers()
    try {
      const { store, writes } = recordingStore()
      const dropped: number[] = []
      const sent = new SentBodies('bull:q', KEEP_SENT_DEFAULTS, async () => store, {
        failed: () => undefined,
        dropped: (count) => dropped.push(count),
      })
      const half = 'x'.repeat(500_000)
      sent.record('acme', 'a', half)
      await vi.advanceTimersByTimeAsync(0)
      expect(writes).toHaveLength(0)
      // The second makes a megabyte waiting: written at once, both in one command (at the bound, not past it).
      sent.record('acme', 'b', half)
      await vi.advanceTimersByTimeAsync(0)
      expect(writes.map((write) => write[4])).toEqual([2])
      const big = 'x'.repeat(400_000)
      sent.record('acme', 'c', big)
      sent.record('acme', 'c2', big)
      await vi.advanceTimersByTimeAsync(0)
      expect(writes).toHaveLength(1)
      // The third reaches past a megabyte: written at once, as two commands within the bound.
      sent.record('acme', 'c3', big)
      await vi.advanceTimersByTimeAsync(0)
      expect(writes.slice(1).map((write) => write[4])).toEqual([2, 1])
      // A body larger than a write's bound goes alone.
      sent.record('acme', 'd', 'y'.repeat(1_200_000))
      await vi.advanceTimersByTimeAsync(0)
      expect(writes).toHaveLength(4)
      expect(writes[3]?.[4]).toBe(1)
      await sent.flush()
      expect(dropped).toEqual([])
    } finally {
      vi.useRealTimers()
    }
  })

  it('writes at most entriesPerWrite entries a command', async () => {
    const { store, writes } = recordingStore()
    const writer = new StreamWriter(
      {
        command: 'counted',
        fields: ['v'],
        flushMs: 60_000,
        entriesPerWrite: 2,
        charsPerWrite: 1_000,
        maxUnwritten: 1_000,
        maxUnwrittenChars: 1_000,
      },
      { maxEntries: 10, maxAgeMs: 1_000 },
      async () => store,
      quiet,
    )
    // Two reach a write's worth: written at once; then three more, flushed.
    writer.add('k', ['a'], 1)
    writer.add('k', ['b'], 1)
    writer.add('k', ['c'], 1)
    writer.add('k', ['d'], 1)
    writer.add('k', ['e'], 1)
    await writer.flush()
    expect(writes.map((write) => write.slice(4))).toEqual([
      [2, 'a', 'b'],
      [2, 'c', 'd'],
      [1, 'e'],
    ])
  })

  it('holds at most its bound of characters while Redis takes nothing, and never throws', async () => {
    const store = {
      defineCommand(name: string) {
        ;(store as unknown as Record<string, unknown>)[name] = () => new Promise(() => undefined)
      },
    } as unknown as StreamStore
    const dropped: number[] = []
    const writer = new StreamWriter(
      {
        command: 'stuck',
        fields: ['v'],
        flushMs: 60_000,
        entriesPerWrite: 1_000,
        charsPerWrite: 1_000,
        maxUnwritten: 1_000,
        maxUnwrittenChars: 25,
      },
      { maxEntries: 10, maxAgeMs: 1_000 },
      async () => store,
      { failed: () => undefined, dropped: (count) => dropped.push(count) },
    )
    writer.add('k', ['a'], 20)
    writer.add('k', ['b'], 5)
    // Past 25 characters waiting: dropped, and told once, at the next write.
    writer.add('k', ['c'], 1)
    writer.add('k', ['d'], 30)
    expect(dropped).toEqual([])
    void writer.flush()
    expect(dropped).toEqual([2])
    // Sent (and hanging): room again.
    writer.add('k', ['e'], 25)
    void writer.flush()
    expect(dropped).toEqual([2])
    expect(MAX_UNWRITTEN_BODY_CHARS).toBe(16_000_000)
  })

  it('reads the window oldest first, a page at a time, each event once, leaving out what does not read', async () => {
    const calls: string[][] = []
    const entries: Array<[string, string[]]> = []
    for (let i = 0; i < REPLAY_PAGE + 5; i++)
      entries.push([`${100 + i}-0`, ['e', `id-${i % (REPLAY_PAGE + 2)}`, 'b', `${i}`]])
    entries.splice(3, 0, ['102-5', ['rogue', 'x']])
    const store: SentReadStore = {
      async xrange(key, start, end, _count, n) {
        calls.push([key, start, end, String(n)])
        const from = start.startsWith('(') ? entries.findIndex(([id]) => id === start.slice(1)) + 1 : 0
        return entries.slice(from, from + n)
      },
    }
    const pages: SentEvent[][] = []
    const given = await eachSent(store, 'bull:q', { destination: 'acme', since: 100, until: 200 }, async (events) => {
      pages.push(events)
    })
    expect(given).toBe(REPLAY_PAGE + 2)
    expect(calls[0]).toEqual(['bull:q:sent:acme', '100', '200-18446744073709551615', String(REPLAY_PAGE)])
    expect(calls[1]?.[1]).toBe(`(${entries[REPLAY_PAGE - 1]?.[0]}`)
    expect(calls).toHaveLength(2)
    expect(pages[0]?.[0]).toEqual({ eventId: 'id-0', body: '0' })
    // The ids that came back in the second page were given in the first already.
    expect(pages.flat().map((sent) => sent.eventId)).toHaveLength(REPLAY_PAGE + 2)
    const own: string[][] = []
    await eachSent(
      {
        async xrange(key, start, end) {
          own.push([key, start, end])
          return []
        },
      },
      'bull:q',
      { destination: undefined, since: 0, until: undefined },
      async () => {
        throw new Error('nothing to give')
      },
    )
    expect(own).toEqual([['bull:q:sent', '0', '+']])
  })
})

describe.runIf(redis.available)('replay, in Redis', () => {
  const connection = () => ({ host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null })
  let queues = 0
  async function sink(respond?: Parameters<typeof startSink>[0]): Promise<Sink> {
    const started = await startSink(respond)
    open.push(started)
    return started
  }
  async function fleet(keepSent: ConstructorParameters<typeof WebhookWorker>[1]['keepSent'] | 'absent' = true) {
    const name = `replay-${queues++}`
    const queue = new WebhookQueue({ connection: connection(), name })
    const worker = new WebhookWorker(
      { backoff: () => 20 },
      { connection: connection(), name, concurrency: 10, ...(keepSent === 'absent' ? {} : { keepSent }) },
    )
    open.push(worker, queue)
    await Promise.all([queue.ready(), worker.ready()])
    const client = new Redis(connection())
    open.push({ close: async () => client.disconnect() })
    /** Resolves once `destination` keeps `count` events (a worker writes them a moment after delivery). */
    const kept = async (destination: string | undefined, count: number) => {
      const key = destinationKey(`bull:${name}`, 'sent', destination)
      await vi.waitFor(async () => expect(await client.xlen(key)).toBe(count), { timeout: 10_000, interval: 20 })
    }
    /** Redis's clock now, in ms: the clock kept events are timed by. */
    const redisNow = async () => {
      const [seconds, micros] = await client.time()
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
    }
    return { queue, worker, name, client, kept, redisNow }
  }

  it('sends a window again to the same destination: same ids and bodies, signed anew, nothing outside it', async () => {
    const acme = await sink()
    const beta = await sink()
    const { queue, worker, kept, redisNow, client, name } = await fleet()
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: acme.url }], sharedSecret: 'acme-secret' })
    await queue.destinations.set({ id: 'beta', webhooks: [{ url: beta.url }] })
    let done = ended(worker, 3)
    await queue.enqueue(event('early', 'gold'), { destination: 'acme' })
    await queue.enqueue(event('early-beta'), { destination: 'beta' })
    await queue.enqueue(event('early-2'), { destination: 'acme' })
    await done
    await kept('acme', 2)
    const cut = (await redisNow()) + 1
    // Kept events are timed by Redis's clock in ms: the later ones start at the next ms or after.
    await vi.waitFor(async () => expect(await redisNow()).toBeGreaterThan(cut))
    done = ended(worker, 1)
    await queue.enqueue(event('late'), { destination: 'acme' })
    await done
    await kept('acme', 3)
    const firstBodies = acme.requests.map((request) => request.body)

    done = ended(worker, 2)
    expect(await queue.replay({ destination: 'acme', since: 0, until: cut })).toEqual({
      found: 2,
      queued: 2,
      inFlight: 0,
      deadLetters: 0,
      disabled: 0,
    })
    const replayed = await done
    expect(replayed.map((result) => [result.eventId, result.status]).sort()).toEqual([
      ['early', 'delivered'],
      ['early-2', 'delivered'],
    ])
    const again = acme.requests.slice(3)
    expect(again.map((request) => request.body)).toEqual(firstBodies.slice(0, 2))
    for (const request of again) {
      expect(request.headers['x-signature']).toBe(createHmac('sha1', 'acme-secret').update(request.body).digest('hex'))
    }
    expect(JSON.parse(again[0]?.body as string)).toMatchObject({ properties: { plan: 'gold' } })
    expect(beta.requests).toHaveLength(1)
    // What was sent again is not kept again: a replay pushes no older event out of what is kept.
    await worker.close()
    expect(await client.xlen(destinationKey(`bull:${name}`, 'sent', 'acme'))).toBe(3)
    // Nothing kept for a window with nothing in it, or for the workers' own webhooks.
    expect(await queue.replay({ destination: 'acme', since: (await redisNow()) + 60_000 })).toMatchObject({
      found: 0,
      queued: 0,
    })
    expect(await queue.replay({ since: 0 })).toMatchObject({ found: 0 })
  })

  it('stores no second job beside a dead letter of the same id, and replays each id once however often it was kept', async () => {
    let failing = false
    const receiver = await sink(() => ({ status: failing ? 400 : 200 }))
    const { queue, worker, client, name, kept } = await fleet()
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url }] })
    let done = ended(worker, 3)
    for (const id of ['a', 'b', 'c']) await queue.enqueue(event(id), { destination: 'acme' })
    await done
    await kept('acme', 3)
    // The replayed copies are refused (a 400 is final): dead letters now.
    failing = true
    done = ended(worker, 3)
    expect(await queue.replay({ destination: 'acme', since: 0 })).toMatchObject({ queued: 3 })
    expect((await done).map((result) => result.status)).toEqual(['failed', 'failed', 'failed'])
    await vi.waitFor(async () => expect(await queue.deadLetters()).toHaveLength(3), { timeout: 10_000 })
    failing = false
    // Kept twice over: a second copy of an id in the window is replayed once.
    await client.xadd(destinationKey(`bull:${name}`, 'sent', 'acme'), '*', 'e', 'a', 'b', '{}')
    expect(await queue.replay({ destination: 'acme', since: 0 })).toEqual({
      found: 3,
      queued: 0,
      inFlight: 0,
      deadLetters: 3,
      disabled: 0,
    })
    for (const id of ['a', 'b', 'c']) expect(await queue.redrive(id, { destination: 'acme' })).toBe(true)
  })

  it('counts an id whose job waits as in flight, and sends it once', async () => {
    const receiver = await sink()
    const { queue, worker, kept, name } = await fleet()
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url }] })
    const done = ended(worker, 1)
    await queue.enqueue(event('once'), { destination: 'acme' })
    await done
    await kept('acme', 1)
    await worker.close()
    // No worker: the replayed job waits in Redis, and a second replay finds it there.
    expect(await queue.replay({ destination: 'acme', since: 0 })).toMatchObject({ queued: 1, inFlight: 0 })
    expect(await queue.replay({ destination: 'acme', since: 0 })).toMatchObject({ queued: 0, inFlight: 1 })
    expect(await queue.enqueue(event('once'), { destination: 'acme' })).toMatchObject({ status: 'duplicate' })
    const next = new WebhookWorker({}, { connection: connection(), name })
    open.push(next)
    await ended(next, 1)
    expect(receiver.requests).toHaveLength(2)
  })

  it('refuses an unknown destination, counts a disabled one’s events, and replays the workers’ own webhooks', async () => {
    const receiver = await sink()
    const { queue, worker, kept, client, name } = await fleet()
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url }] })
    const done = ended(worker, 1)
    await queue.enqueue(event('one'), { destination: 'acme' })
    await done
    await kept('acme', 1)
    await queue.destinations.disable('acme')
    expect(await queue.replay({ destination: 'acme', since: 0 })).toEqual({
      found: 1,
      queued: 0,
      inFlight: 0,
      deadLetters: 0,
      disabled: 1,
    })
    await expect(queue.replay({ destination: 'nosuch', since: 0 })).rejects.toThrow(UnknownDestinationError)
    // Deleted, what was kept goes with it: an id set again finds nothing of the customer before.
    expect(await queue.destinations.delete('acme')).toBe(true)
    expect(await client.exists(destinationKey(`bull:${name}`, 'sent', 'acme'))).toBe(0)
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url }] })
    expect(await queue.replay({ destination: 'acme', since: 0 })).toMatchObject({ found: 0 })
    await queue.close()
    await expect(queue.replay({ destination: 'acme', since: 0 })).rejects.toMatchObject({ code: 'ERR_CLOSED' })

    const own = await sink()
    const ownName = `replay-own-${queues++}`
    const ownQueue = new WebhookQueue({ connection: connection(), name: ownName })
    const ownWorker = new WebhookWorker(
      { webhooks: [{ url: own.url }] },
      { connection: connection(), name: ownName, keepSent: { maxEntries: 2 } },
    )
    open.push(ownWorker, ownQueue)
    await Promise.all([ownQueue.ready(), ownWorker.ready()])
    let ownDone = ended(ownWorker, 3)
    for (const id of ['x', 'y', 'z']) await ownQueue.enqueue(event(id, id))
    await ownDone
    await ownWorker.close()
    // Kept: the newest two.
    const again = new WebhookWorker({ webhooks: [{ url: own.url }] }, { connection: connection(), name: ownName })
    open.push(again)
    ownDone = ended(again, 2)
    expect(await ownQueue.replay({ since: 0 })).toMatchObject({ found: 2, queued: 2 })
    await ownDone
    expect(
      own.requests
        .slice(3)
        .map((request) => JSON.parse(request.body).properties.plan)
        .sort(),
    ).toEqual(['y', 'z'])
  })

  it('keeps nothing without keepSent, and a key that expires maxAgeMs after its last write', async () => {
    const receiver = await sink()
    const off = await fleet('absent')
    await off.queue.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url }] })
    let done = ended(off.worker, 1)
    await off.queue.enqueue(event('quiet'), { destination: 'acme' })
    await done
    await off.worker.close()
    expect(await off.client.exists(destinationKey(`bull:${off.name}`, 'sent', 'acme'))).toBe(0)
    expect(await off.queue.replay({ destination: 'acme', since: 0 })).toMatchObject({ found: 0 })

    const on = await fleet({ maxAgeMs: 60_000 })
    await on.queue.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url }] })
    done = ended(on.worker, 1)
    await on.queue.enqueue(event('kept'), { destination: 'acme' })
    await done
    await on.worker.close()
    const ttl = await on.client.pttl(destinationKey(`bull:${on.name}`, 'sent', 'acme'))
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })

  it('refuses a worker keepSent it cannot use, naming the field', () => {
    expect(() => new WebhookWorker({}, { connection: connection(), keepSent: { maxEntries: 0 } })).toThrow(
      /keepSent\.maxEntries/,
    )
  })
})
