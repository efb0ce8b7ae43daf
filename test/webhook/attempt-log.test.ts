// The attempt log: each request the workers make, per destination, in Redis, bounded by count
// and age, read newest first through WebhookQueue.attempts(); entries that something else wrote
// there are left out, and the log never holds up a delivery.
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { OptionsError } from '../../src/index.js'
import {
  ATTEMPT_LOG_DEFAULTS,
  ATTEMPT_LOG_FLUSH_MS,
  AttemptLog,
  MAX_UNWRITTEN_ATTEMPTS,
  resolveAttemptLog,
  type AttemptLogStore,
} from '../../src/webhook/bullmq/attempt-log.js'
import {
  PACKED_FIELD,
  readAttempts,
  readEntry,
  resolveAttemptsOptions,
  type AttemptReadStore,
  type AttemptsOptions,
} from '../../src/webhook/bullmq/logged-attempt.js'
import { destinationKey } from '../../src/webhook/bullmq/registry.js'
import { WebhookQueue, WebhookWorker, type LoggedAttempt } from '../../src/webhook/bullmq/index.js'
import type { AttemptNotice } from '../../src/webhook/index.js'
import { WebhookError } from '../../src/webhook/index.js'
import { ended } from '../helpers/ended.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Sink } from '../helpers/sink.js'

const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

/** The attempts of destination `acme` under `keys`, as WebhookQueue.attempts() reads them. */
const queueRead = (store: AttemptReadStore, keys: string, options: AttemptsOptions) =>
  readAttempts(store, keys, resolveAttemptsOptions({ destination: 'acme', ...options }))

/** A log entry's fields as a worker writes them: an accepted first attempt, `over` replacing some. */
const entryFields = (eventId: string, over: Record<string, string> = {}) =>
  Object.entries({ t: '1', e: eventId, u: 'http://a/', n: '1', s: '200', c: '', x: '', d: '1', ...over }).flat()

/** A first attempt to http://a/ that was accepted. */
const ACCEPTED: AttemptNotice = {
  eventId: 'e',
  url: 'http://a/',
  attempts: 1,
  accepted: true,
  status: 200,
  error: undefined,
}

const event = (id: string) => ({ type: 'track' as const, userId: 'u1', event: 'Paid', messageId: id })
let queues = 0

describe('the attempt log, apart from Redis', () => {
  it('takes maxEntries and maxAgeMs, false for none, and refuses what it cannot use by name', () => {
    expect(resolveAttemptLog(undefined)).toEqual(ATTEMPT_LOG_DEFAULTS)
    expect(ATTEMPT_LOG_DEFAULTS).toEqual({ maxEntries: 200, maxAgeMs: 604_800_000 })
    expect(resolveAttemptLog(false)).toBeUndefined()
    expect(resolveAttemptLog({ maxEntries: 5 })).toEqual({ maxEntries: 5, maxAgeMs: 604_800_000 })
    expect(() => resolveAttemptLog({ maxEntries: 0 })).toThrow(/attemptLog\.maxEntries.*from 1 to 1000000/)
    expect(() => resolveAttemptLog({ maxAgeMs: 999 })).toThrow(/attemptLog\.maxAgeMs/)
    expect(() => resolveAttemptLog({ maxCount: 5 })).toThrow(/attemptLog\.maxCount.*maxEntries/)
    expect(() => resolveAttemptLog(true)).toThrow(OptionsError)
  })

  it('reads options of attempts() and refuses what it cannot use by name', () => {
    expect(resolveAttemptsOptions(undefined)).toEqual({
      destination: undefined,
      eventId: undefined,
      limit: 100,
      since: undefined,
      until: undefined,
    })
    expect(() => resolveAttemptsOptions({ limit: 0 })).toThrow(/`limit`.*from 1 to 10000/)
    expect(() => resolveAttemptsOptions({ limit: 10_001 })).toThrow(/`limit`/)
    expect(() => resolveAttemptsOptions({ destination: 'a:b' })).toThrow(/`destination`/)
    expect(() => resolveAttemptsOptions({ eventId: '' })).toThrow(/`eventId`/)
    expect(() => resolveAttemptsOptions({ since: -1 })).toThrow(/`since`/)
    expect(() => resolveAttemptsOptions({ until: -1 })).toThrow(/`until`/)
    expect(() => resolveAttemptsOptions({ count: 5 })).toThrow(/`count`.*limit/)
    expect(() => resolveAttemptsOptions('acme')).toThrow(OptionsError)
  })

  it('names a stream per destination, and one of its own for the workers’ own webhooks', () => {
    expect(destinationKey('bull:q', 'attempts', 'acme')).toBe('bull:q:attempts:acme')
    expect(destinationKey('bull:q', 'attempts', undefined)).toBe('bull:q:attempts')
  })

  it('reads a packed entry as one of a field each, and leaves out one that does not read as one', () => {
    const packed = (values: unknown) => [PACKED_FIELD, typeof values === 'string' ? values : JSON.stringify(values)]
    const written = [1000, 'e1', 'http://a/', 2, 503, 'ERR_HTTP_STATUS', 'boom', 1.5]
    const read = readEntry(packed(written), 'acme')
    // As the same values in a field each read (the next test pins what that is).
    expect(read).toMatchObject({ at: 1000, eventId: 'e1', destination: 'acme', status: 503, durationMs: 1.5 })
    expect(read).toEqual(
      readEntry(entryFields('e1', { t: '1000', n: '2', s: '503', c: 'ERR_HTTP_STATUS', x: 'boom', d: '1.5' }), 'acme'),
    )
    expect(readEntry(packed([1000, 'e1', 'http://a/', 1, '', 'ERR_NETWORK', 'refused', 0]), undefined)).toMatchObject({
      accepted: false,
      code: 'ERR_NETWORK',
    })
    // The packed field wins over fields beside it.
    expect(readEntry([...entryFields('other'), ...packed(written)], undefined)).toMatchObject({ eventId: 'e1' })
    for (const bad of [
      'not json',
      '{"t":1}',
      written.slice(0, 7),
      [...written, 'more'],
      written.map((value, index) => (index === 3 ? [2] : value)),
      written.map((value, index) => (index === 0 ? null : value)),
      written.map((value, index) => (index === 1 ? true : value)),
      written.map((value, index) => (index === 0 ? '-1' : value)),
    ])
      expect(readEntry(packed(bad), undefined), JSON.stringify(bad)).toBeUndefined()
  })

  it('reads an entry of a field each, as earlier versions wrote, and leaves out one that does not read as one', () => {
    const fields = (over: Record<string, string> = {}) =>
      entryFields('e1', { t: '1000', n: '2', s: '503', c: 'ERR_HTTP_STATUS', x: 'boom', d: '1.5', ...over })
    expect(readEntry(fields(), 'acme')).toEqual({
      at: 1000,
      eventId: 'e1',
      destination: 'acme',
      url: 'http://a/',
      attempt: 2,
      accepted: false,
      status: 503,
      code: 'ERR_HTTP_STATUS',
      error: 'boom',
      durationMs: 1.5,
    })
    expect(readEntry(fields({ s: '200', c: '', x: '' }), undefined)).toEqual({
      at: 1000,
      eventId: 'e1',
      url: 'http://a/',
      attempt: 2,
      accepted: true,
      status: 200,
      durationMs: 1.5,
    })
    const unanswered = readEntry(fields({ s: '', c: 'ERR_NETWORK', x: 'a\u001b[2Jb' }), undefined)
    expect(unanswered).toMatchObject({ code: 'ERR_NETWORK', error: 'a [2Jb' })
    expect(unanswered).not.toHaveProperty('status')
    expect(readEntry(fields({ x: 'y'.repeat(500) }), undefined)?.error).toHaveLength(200)
    for (const bad of [
      { t: 'x' },
      { t: '-1' },
      { e: '' },
      { u: '' },
      { n: '0' },
      { n: '1.5' },
      { s: '42' },
      { s: '1000' },
      { c: 'rm -rf' },
      { d: '-1' },
      { d: 'NaN' },
    ])
      expect(readEntry(fields(bad), undefined), JSON.stringify(bad)).toBeUndefined()
    expect(readEntry(['t', '1'], undefined)).toBeUndefined()
  })

  it('drops attempts past its bound while Redis takes none, says how many, and never throws', async () => {
    const dropped: number[] = []
    const failures: Error[] = []
    // A store whose writes never end: Redis that has stopped answering.
    const store: AttemptLogStore = {
      defineCommand(name) {
        ;(this as unknown as Record<string, unknown>)[name] = () => new Promise(() => undefined)
      },
    }
    const log = new AttemptLog('bull:q', ATTEMPT_LOG_DEFAULTS, async () => store, {
      failed: (error) => failures.push(error),
      dropped: (count) => dropped.push(count),
    })
    const notice = ACCEPTED
    for (let i = 0; i < MAX_UNWRITTEN_ATTEMPTS + 7; i++) log.record('acme', notice, 1_000)
    void log.flush()
    expect(dropped).toEqual([7])
    expect(failures).toEqual([])
  })

  it('reports a write Redis refused, and goes on', async () => {
    const failures: Error[] = []
    const store: AttemptLogStore = {
      defineCommand(name) {
        ;(this as unknown as Record<string, unknown>)[name] = () => Promise.reject(new Error('OOM command not allowed'))
      },
    }
    const log = new AttemptLog('bull:q', ATTEMPT_LOG_DEFAULTS, async () => store, {
      failed: (error) => failures.push(error),
      dropped: () => undefined,
    })
    const error = new WebhookError('ERR_HTTP_STATUS', 'http://a/', 'http://a/ answered HTTP 503.', { status: 503 })
    log.record(undefined, { eventId: 'e', url: 'http://a/', attempts: 1, accepted: false, status: 503, error }, 1_000)
    await log.flush()
    expect(failures.map((failure) => failure.message)).toEqual(['OOM command not allowed'])
  })
})

describe('the attempt log, its writes and reads, apart from Redis', () => {
  /** A store that records each write and answers at once. */
  function recordingStore() {
    const writes: unknown[][] = []
    const defined: string[] = []
    const store = {
      defineCommand(name: string) {
        defined.push(name)
        ;(store as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
          writes.push(args)
          return 1
        }
      },
    } as unknown as AttemptLogStore
    return { store, writes, defined }
  }
  const hooks = { failed: () => undefined, dropped: () => undefined }

  it('writes each attempt as one field: sent-at, id, URL, number, status, code, text, duration to a tenth of a ms', async () => {
    const { store, writes, defined } = recordingStore()
    const log = new AttemptLog('bull:q', { maxEntries: 5, maxAgeMs: 60_000 }, async () => store, hooks)
    const error = new WebhookError('ERR_HTTP_STATUS', 'http://a/', 'http://a/ answered HTTP 503.', { status: 503 })
    log.record(
      'acme',
      { eventId: 'e1', url: 'http://a/', attempts: 2, accepted: false, status: 503, error, durationMs: 12.345 },
      10_000,
    )
    log.record(
      'acme',
      { eventId: 'e2', url: 'http://a/', attempts: 1, accepted: true, status: 200, error: undefined, durationMs: 0.04 },
      10_000,
    )
    log.record(
      undefined,
      { eventId: 'e3', url: 'http://b/', attempts: 1, accepted: false, status: undefined, error: undefined },
      10_000,
    )
    await log.flush()
    expect(writes).toEqual([
      [
        2,
        'bull:q:attempts:acme',
        'bull:q:attempts',
        5,
        60_000,
        2,
        '[9988,"e1","http://a/",2,503,"ERR_HTTP_STATUS","http://a/ answered HTTP 503.",12.3]',
        '[10000,"e2","http://a/",1,200,"","",0]',
        1,
        '[10000,"e3","http://b/",1,"","ERR_NETWORK","",0]',
      ],
    ])
    await log.flush()
    expect(writes).toHaveLength(1)
    log.record(
      'acme',
      { eventId: 'e4', url: 'http://a/', attempts: 1, accepted: true, status: 200, error: undefined },
      1,
    )
    await log.flush()
    expect(defined).toEqual(['eventwireAttemptLog'])
  })

  it('waits a tenth of a second for more, and writes at once when a write’s worth is waiting', async () => {
    vi.useFakeTimers()
    try {
      const { store, writes } = recordingStore()
      const log = new AttemptLog('bull:q', ATTEMPT_LOG_DEFAULTS, async () => store, hooks)
      const notice: AttemptNotice = ACCEPTED
      log.record('acme', notice, 1)
      await vi.advanceTimersByTimeAsync(ATTEMPT_LOG_FLUSH_MS - 1)
      expect(writes).toHaveLength(0)
      // A later record does not push the write back.
      log.record('acme', notice, 1)
      await vi.advanceTimersByTimeAsync(1)
      expect(writes).toHaveLength(1)
      for (let i = 0; i < 499; i++) log.record('acme', notice, 1)
      await vi.advanceTimersByTimeAsync(0)
      expect(writes).toHaveLength(1)
      log.record('acme', notice, 1)
      await vi.advanceTimersByTimeAsync(0)
      expect(writes).toHaveLength(2)
      expect(writes[1]?.[4]).toBe(500)
      await log.flush()
    } finally {
      vi.useRealTimers()
    }
  })

  it('tells dropped attempts only when there were some', async () => {
    const dropped: number[] = []
    const { store } = recordingStore()
    const log = new AttemptLog('bull:q', ATTEMPT_LOG_DEFAULTS, async () => store, {
      ...hooks,
      dropped: (n) => dropped.push(n),
    })
    log.record('acme', ACCEPTED, 1)
    await log.flush()
    expect(dropped).toEqual([])
  })

  it('says what the option takes, and the names people reach for', () => {
    expect(() => resolveAttemptLog(true)).toThrow(
      'Invalid option `attemptLog`: expected { maxEntries?, maxAgeMs? }, or false for none.',
    )
    expect(() => resolveAttemptLog({ count: 5 })).toThrow(
      'Invalid option `attemptLog.count`: no such option; use `maxEntries` instead.',
    )
    expect(resolveAttemptLog({ maxEntries: 1_000_000, maxAgeMs: 1_000 })).toEqual({
      maxEntries: 1_000_000,
      maxAgeMs: 1_000,
    })
    expect(() => resolveAttemptLog({ maxEntries: 1_000_001 })).toThrow(/attemptLog\.maxEntries/)
  })

  it('says what attempts() takes, and the names people reach for', () => {
    expect(() => resolveAttemptsOptions(7)).toThrow(
      'Invalid option `options`: expected { destination?, eventId?, limit?, since?, until? }.',
    )
    expect(() => resolveAttemptsOptions({ from: 1 })).toThrow('use `since` instead')
    expect(() => resolveAttemptsOptions({ to: 1 })).toThrow('use `until` instead')
    expect(() => resolveAttemptsOptions({ messageId: 'e' })).toThrow('use `eventId` instead')
    expect(() => resolveAttemptsOptions({ eventId: 5 })).toThrow(
      'Invalid option `eventId`: expected the event id (its messageId), a non-empty string.',
    )
    expect(resolveAttemptsOptions({ destination: 'acme', eventId: 'e', limit: 10_000, since: 0, until: 5 })).toEqual({
      destination: 'acme',
      eventId: 'e',
      limit: 10_000,
      since: 0,
      until: 5,
    })
  })

  it('reads one command without eventId, and pages of a thousand with it until a short page', async () => {
    const asked: unknown[][] = []
    const entry = (id: string, eventId: string): [string, string[]] => [id, entryFields(eventId)]
    const pages: Array<Array<[string, string[]]>> = [
      Array.from({ length: 1_000 }, (_, i) => entry(`${2_000 - i}-0`, i === 5 ? 'wanted' : 'other')),
      [entry('999-0', 'wanted'), entry('998-0', 'other')],
    ]
    const store: AttemptReadStore = {
      xrevrange: async (...args) => {
        asked.push(args)
        return pages.shift() ?? []
      },
    }
    const read = (options: AttemptsOptions) => readAttempts(store, 'bull:q', resolveAttemptsOptions(options))
    const found = await read({ destination: 'acme', eventId: 'wanted', since: 10, until: 20 })
    expect(found.map((attempt) => attempt.eventId)).toEqual(['wanted', 'wanted'])
    expect(asked).toEqual([
      ['bull:q:attempts:acme', '20-18446744073709551615', '10', 'COUNT', 1_000],
      ['bull:q:attempts:acme', '(1001-0', '10', 'COUNT', 1_000],
    ])
    asked.length = 0
    pages.push([entry('5-0', 'a'), entry('4-0', 'b')])
    expect((await read({ limit: 2 })).map((attempt) => attempt.eventId)).toEqual(['a', 'b'])
    expect(asked).toEqual([['bull:q:attempts', '+', '-', 'COUNT', 2]])
  })

  it('reads the bounds of each field as an attempt, and refuses what lies past them', () => {
    const at = (over: Record<string, string>) => readEntry(entryFields('e', over), undefined)
    expect(at({ t: '0', d: '0' })).toMatchObject({ at: 0, durationMs: 0 })
    expect(at({ s: '100' })).toMatchObject({ status: 100 })
    expect(at({ s: '999' })).toMatchObject({ status: 999 })
    expect(at({ n: '1' })).toMatchObject({ attempt: 1 })
    expect(at({ c: 'ERR_TIMEOUT!', x: 'x' })).toBeUndefined()
    expect(at({ c: 'XERR_TIMEOUT', x: 'x' })).toBeUndefined()
    expect(readEntry([...entryFields('e'), 'orphan'], undefined)).toBeDefined()
    for (const field of ['e', 'u', 's', 'c', 'x']) {
      const fields = entryFields('e')
      const index = fields.indexOf(field)
      fields.splice(index, 2)
      expect(readEntry(fields, undefined), field).toBeUndefined()
    }
  })
})

describe.runIf(redis.available)('the attempt log, in Redis', () => {
  const connection = () => ({ host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null })
  async function sink(respond?: Parameters<typeof startSink>[0]): Promise<Sink> {
    const started = await startSink(respond)
    open.push(started)
    return started
  }
  async function fleet(attemptLog?: ConstructorParameters<typeof WebhookWorker>[1]['attemptLog']) {
    const name = `attempts-${queues++}`
    const queue = new WebhookQueue({ connection: connection(), name })
    const worker = new WebhookWorker(
      { backoff: () => 20 },
      { connection: connection(), name, concurrency: 10, ...(attemptLog === undefined ? {} : { attemptLog }) },
    )
    open.push(worker, queue)
    await Promise.all([queue.ready(), worker.ready()])
    return { queue, worker, name }
  }

  it("logs each destination's attempts apart, newest first: time, URL, status or error, duration", async () => {
    const flaky = await sink((_request, index) => ({ status: index === 0 ? 503 : 200 }))
    const healthy = await sink()
    const { queue, worker, name } = await fleet()
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: flaky.url }] })
    await queue.destinations.set({ id: 'beta', webhooks: [{ url: healthy.url }] })
    const done = ended(worker, 3)
    const before = Date.now()
    await queue.enqueue(event('a1'), { destination: 'acme' })
    await queue.enqueue(event('b1'), { destination: 'beta' })
    await queue.enqueue(event('b2'), { destination: 'beta' })
    expect((await done).map((result) => result.status)).toEqual(['delivered', 'delivered', 'delivered'])
    // close() writes what the worker still holds.
    await worker.close()
    // An entry is one field: its values packed in a JSON array.
    const stored = await redis.raw.xrange(`bull:${name}:attempts:beta`, '-', '+')
    expect(stored.map(([, fields]) => [fields[0], JSON.parse(fields[1] as string)[1]])).toEqual([
      ['a', 'b1'],
      ['a', 'b2'],
    ])
    expect(stored.every(([, fields]) => fields.length === 2)).toBe(true)

    const acme = await queue.attempts({ destination: 'acme' })
    const url = new URL(flaky.url).href
    expect(acme).toEqual([
      expect.objectContaining({ eventId: 'a1', destination: 'acme', url, attempt: 2, accepted: true, status: 200 }),
      expect.objectContaining({
        eventId: 'a1',
        url,
        attempt: 1,
        accepted: false,
        status: 503,
        code: 'ERR_HTTP_STATUS',
        error: `${url} answered HTTP 503.`,
      }),
    ])
    for (const attempt of acme) {
      expect(attempt.at).toBeGreaterThanOrEqual(before - 2_000)
      expect(attempt.at).toBeLessThanOrEqual(Date.now() + 2_000)
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0)
    }
    expect((acme[0] as LoggedAttempt).at).toBeGreaterThanOrEqual((acme[1] as LoggedAttempt).at)
    const beta = await queue.attempts({ destination: 'beta' })
    expect(beta.map((attempt) => attempt.eventId)).toEqual(['b2', 'b1'])
    expect(await queue.attempts({ destination: 'beta', limit: 1 })).toEqual([beta[0]])
    expect(await queue.attempts({ destination: 'beta', eventId: 'b1' })).toEqual([beta[1]])
    expect(await queue.attempts({ destination: 'beta', eventId: 'nope' })).toEqual([])
    expect(await queue.attempts({ destination: 'nobody' })).toEqual([])
    expect(await queue.attempts()).toEqual([])
  })

  it('logs the attempts of a worker with webhooks of its own apart from any destination', async () => {
    const receiver = await sink()
    const name = `attempts-${queues++}`
    const queue = new WebhookQueue({ connection: connection(), name })
    const worker = new WebhookWorker({ webhooks: [{ url: receiver.url }] }, { connection: connection(), name })
    open.push(worker, queue)
    await Promise.all([queue.ready(), worker.ready()])
    const done = ended(worker, 1)
    await queue.enqueue(event('own-1'))
    await done
    await worker.close()
    const [attempt, ...more] = await queue.attempts()
    expect(more).toEqual([])
    expect(attempt).toMatchObject({ eventId: 'own-1', accepted: true, status: 200, attempt: 1 })
    expect(attempt).not.toHaveProperty('destination')
  })

  it('keeps the newest maxEntries, and a key that expires maxAgeMs after its last write', async () => {
    const receiver = await sink()
    const { queue, worker, name } = await fleet({ maxEntries: 3, maxAgeMs: 60_000 })
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url }] })
    const done = ended(worker, 5)
    for (let i = 0; i < 5; i++) await queue.enqueue(event(`e${i}`), { destination: 'acme' })
    await done
    await worker.close()
    const kept = await queue.attempts({ destination: 'acme' })
    expect(kept).toHaveLength(3)
    expect(new Set(kept.map((attempt) => attempt.eventId)).size).toBe(3)
    const client = new Redis(connection())
    try {
      const ttl = await client.pttl(`bull:${name}:attempts:acme`)
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(60_000)
    } finally {
      client.disconnect()
    }
  })

  it('trims what is older than maxAgeMs by Redis’s clock, and reads since and until by it', async () => {
    const client = new Redis(connection())
    open.push({ close: async () => client.disconnect() })
    const key = destinationKey('bull:aged', 'attempts', 'acme')
    // Two entries an hour old, as a worker would have written them then.
    const hourAgo = Date.now() - 3_600_000
    await client.xadd(key, `${hourAgo}-0`, ...entryFields('old-1'))
    await client.xadd(key, `${hourAgo}-1`, ...entryFields('old-2'))
    const log = new AttemptLog(
      'bull:aged',
      { maxEntries: 100, maxAgeMs: 60_000 },
      async () => client as unknown as AttemptLogStore,
      {
        failed: (error) => {
          throw error
        },
        dropped: () => undefined,
      },
    )
    log.record(
      'acme',
      { eventId: 'new', url: 'http://a/', attempts: 1, accepted: true, status: 200, error: undefined, durationMs: 3 },
      Date.now(),
    )
    await log.flush()
    const store = client as unknown as AttemptReadStore
    expect((await queueRead(store, 'bull:aged', {})).map((attempt) => attempt.eventId)).toEqual(['new'])

    // since and until select by the time each entry was written.
    const ranged = destinationKey('bull:ranged', 'attempts', 'acme')
    await client.xadd(ranged, `${hourAgo + 10}-0`, ...entryFields('then'))
    await client.xadd(ranged, '*', ...entryFields('now'))
    const read = async (options: AttemptsOptions) =>
      (await queueRead(store, 'bull:ranged', options)).map((attempt) => attempt.eventId)
    expect(await read({ until: hourAgo + 10 })).toEqual(['then'])
    expect(await read({ until: hourAgo + 9 })).toEqual([])
    expect(await read({ since: hourAgo + 11 })).toEqual(['now'])
    expect(await read({ since: hourAgo + 10 })).toEqual(['now', 'then'])
  })

  it('leaves out entries that do not read as attempts, and pages through a long log for one event', async () => {
    const client = new Redis(connection())
    open.push({ close: async () => client.disconnect() })
    const key = destinationKey('bull:paged', 'attempts', 'acme')
    await client.xadd(key, '*', ...entryFields('wanted'))
    const many = client.pipeline()
    for (let i = 0; i < 2_500; i++) many.xadd(key, '*', ...entryFields(`other-${i}`))
    await many.exec()
    await client.xadd(key, '*', 'rogue', '\u001b[31mred')
    await client.xadd(key, '*', ...entryFields('wanted'))
    const store = client as unknown as AttemptReadStore
    const found = await queueRead(store, 'bull:paged', { eventId: 'wanted' })
    expect(found.map((attempt) => attempt.eventId)).toEqual(['wanted', 'wanted'])
    const newest = await queueRead(store, 'bull:paged', { limit: 2 })
    expect(newest.map((attempt) => attempt.eventId)).toEqual(['wanted', 'other-2499'])
  })

  it('writes nothing with attemptLog: false', async () => {
    const receiver = await sink()
    const { queue, worker } = await fleet(false)
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url }] })
    const done = ended(worker, 1)
    await queue.enqueue(event('quiet'), { destination: 'acme' })
    await done
    await worker.close()
    expect(await queue.attempts({ destination: 'acme' })).toEqual([])
  })

  it('refuses a worker attemptLog it cannot use, naming the field', () => {
    expect(() => new WebhookWorker({}, { connection: connection(), attemptLog: { maxEntries: -1 } })).toThrow(
      /attemptLog\.maxEntries/,
    )
  })
})
