// The breakers every worker of a queue shares, in a real Redis, on a clock the test moves: what a
// worker reads and when, what an opening or a close writes, and who may probe after a cool-down.
// Redis's clock times every opening: a worker hears how long a breaker is still open, and counts
// that on its own clock, however far that clock is from the others'.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { BREAKER_REFRESH_MS, type BreakerStore, SharedBreakers } from '../../src/webhook/bullmq/shared-breakers.js'
import { UNREAD } from '../../src/webhook/delivery/url-policy.js'
import { redisForFile } from '../helpers/redis-suite.js'

const redis = redisForFile({ persistent: false })
const URL_A = 'https://hooks.example.com/a'
const URL_B = 'https://hooks.example.com/b'
const TIMEOUT_MS = 2_000
const COOL_DOWN_MS = 1_000
let queues = 0
let handWrites = 0

/** A gate a store's reads wait at while it is shut. */
interface Gate {
  shut(): void
  open(): void
}

/**
 * A worker's shared breakers on the file's Redis. `gets` counts the reads of a breaker, which can
 * be held at `gate`; `errors` is what `failed` heard.
 */
function workerOf(prefix: string, clock: { now: number }, skewMs = 0) {
  let gets = 0
  let held: Promise<void> | undefined
  let release = () => {}
  const gate: Gate = {
    shut: () => {
      held = new Promise<void>((resolve) => {
        release = resolve
      })
    },
    open: () => {
      held = undefined
      release()
    },
  }
  const lists: number[] = []
  const store: BreakerStore = {
    eval: async (script, keys, ...args) => {
      // A reading is the one script with one key; openings, closings and claims name the probe's too.
      if (keys === 1) {
        gets++
        await held
      }
      const answer = await redis.raw.eval(script, keys, ...args)
      if (String(args[0]).endsWith(':breakers-open')) lists.push((answer as unknown[]).length)
      return answer
    },
  }
  const errors: Error[] = []
  const breakers = new SharedBreakers({
    store: async () => store,
    prefix,
    timeoutMs: TIMEOUT_MS,
    coolDownMs: COOL_DOWN_MS,
    now: () => clock.now + skewMs,
    failed: (error) => errors.push(error),
  })
  return { breakers, errors, gate, gets: () => gets, lists, prefix, now: () => clock.now + skewMs }
}

/** Two workers of one new queue, on one clock. */
function queueOf() {
  const prefix = `bull:breakers-${++queues}`
  const clock = { now: 1_700_000_000_000 }
  const key = (url: string) => `${prefix}:breaker:${createHash('sha1').update(url).digest('hex')}`
  return { prefix, clock, key, a: workerOf(prefix, clock), b: workerOf(prefix, clock) }
}

/**
 * Writes `value` into a breaker's key as another writer with Redis access could, and lists the key
 * in the queue's index of open breakers (as an opening does), for a minute.
 */
async function writeOpen(key: string, value: string): Promise<void> {
  const prefix = key.slice(0, key.indexOf(':breaker:'))
  await redis.raw.set(key, value)
  await redis.raw.zadd(`${prefix}:breakers-open`, (await redisNow()) + 60_000, key)
  await redis.raw.set(`${prefix}:breakers-open:version`, `written by hand ${++handWrites}`)
}

/** The prefix of the queue a worker of {@link queueOf} is on. */
const queuePrefix = (worker: { prefix: string }) => worker.prefix

/** {@link queueOf}, whose worker `b` also counts the keys each listing of the index brought back (its answer less the version). */
function queueOfCounted() {
  const queue = queueOf()
  return { ...queue, lists: queue.b.lists }
}

/** Redis's time, in ms. */
async function redisNow(): Promise<number> {
  const [seconds, micros] = await redis.raw.time()
  return Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000)
}

/** Expects `until` to be `left` ms after `now`, less the few ms that pass in Redis meanwhile. */
function expectOpenFor(until: number | undefined, now: number, left: number): void {
  expect(until).toBeLessThanOrEqual(now + left)
  expect(until).toBeGreaterThan(now + left - 500)
}

/** Shared breakers whose Redis is out of reach. */
function unreachable() {
  const errors: Error[] = []
  const breakers = new SharedBreakers({
    store: () => Promise.reject(new Error('no Redis')),
    prefix: 'bull:down',
    timeoutMs: TIMEOUT_MS,
    coolDownMs: COOL_DOWN_MS,
    now: () => 1_700_000_000_000,
    failed: (error) => errors.push(error),
  })
  return { breakers, errors }
}

describe.runIf(redis.available)('SharedBreakers', () => {
  it("waits for Redis the first time it is asked about a URL: another worker's opening, or nobody's", async () => {
    const { clock, key, a, b } = queueOf()
    a.breakers.open(URL_A, 5_000)
    await expect.poll(() => redis.raw.exists(key(URL_A))).toBe(1)
    expectOpenFor(await b.breakers.read(URL_A), clock.now, 5_000)
    expect(await b.breakers.read(URL_B)).toBeUndefined()
    expect(b.errors).toEqual([])
  })

  it('reads a URL once for everyone who asks before the first answer', async () => {
    const { clock, key, b } = queueOf()
    await writeOpen(key(URL_A), String((await redisNow()) + 5_000))
    b.gate.shut()
    const asked = [b.breakers.read(URL_A), b.breakers.read(URL_A)]
    b.gate.open()
    const [first, second] = await Promise.all(asked)
    expectOpenFor(first, clock.now, 5_000)
    expect(second).toBe(first)
    expect(b.gets()).toBe(1)
  })

  it('answers from its last reading of a URL the index lists, and reads it again in the background once it is BREAKER_REFRESH_MS old', async () => {
    const { clock, key, b } = queueOf()
    await writeOpen(key(URL_A), String((await redisNow()) + 5_000))
    expectOpenFor(await b.breakers.read(URL_A), clock.now, 5_000)
    await writeOpen(key(URL_A), String((await redisNow()) + 8_000))
    clock.now += BREAKER_REFRESH_MS - 1
    expectOpenFor(await b.breakers.read(URL_A), clock.now - BREAKER_REFRESH_MS + 1, 5_000)
    expect(b.gets()).toBe(1)
    clock.now += 1
    // Due for a new reading: this answer is the old one, the next ones hear the new.
    expectOpenFor(b.breakers.known(URL_A) as number, clock.now - BREAKER_REFRESH_MS, 5_000)
    await expect.poll(() => b.gets()).toBe(2)
    await expect.poll(() => (b.breakers.known(URL_A) as number) - clock.now).toBeGreaterThan(6_000)
  })

  it('reads no key of a URL the index does not list: one listing a refresh answers for every URL, and only its version while nothing changed', async () => {
    const { clock, b, lists } = queueOfCounted()
    for (let index = 0; index < 100; index++) expect(await b.breakers.read(`${URL_A}/${index}`)).toBeUndefined()
    expect(b.gets()).toBe(0)
    expect(lists).toEqual([1])
    clock.now += BREAKER_REFRESH_MS
    expect(b.breakers.known(URL_B)).toBeUndefined()
    await expect.poll(() => lists).toEqual([1, 1])
    expect(b.gets()).toBe(0)
  })

  it("hears another worker's opening and close within a refresh: the key enters or leaves the index, and an opening it holds is read again at once", async () => {
    const { clock, a, b } = queueOf()
    expect(await b.breakers.read(URL_A)).toBeUndefined()
    a.breakers.open(URL_A, 5_000)
    await expect.poll(() => a.errors.length + b.gets()).toBe(0)
    await expect.poll(async () => redis.raw.zcard(`${queuePrefix(a)}:breakers-open`)).toBe(1)
    // Not listed when b last read the index: nobody holds it open, until the next listing.
    expect(b.breakers.known(URL_A)).toBeUndefined()
    clock.now += BREAKER_REFRESH_MS
    b.breakers.known(URL_A)
    // Listed now: the URL's key is read, and waited for.
    await expect.poll(() => b.breakers.known(URL_A)).toBe(UNREAD)
    expectOpenFor(await b.breakers.read(URL_A), clock.now, 5_000)
    expect(b.gets()).toBe(1)
    a.breakers.close(URL_A)
    await expect.poll(async () => redis.raw.zcard(`${queuePrefix(a)}:breakers-open`)).toBe(0)
    clock.now += BREAKER_REFRESH_MS
    b.breakers.known(URL_A)
    // Its reading is read again: due, and no longer listed (once: not a second read while one is under way).
    await expect.poll(() => b.breakers.known(URL_A)).toBeUndefined()
    expect(b.gets()).toBe(2)
    expect(b.errors).toEqual([])
  })

  it('reads a reading it holds again as soon as a listing shows its key entered the index, before that reading is due', async () => {
    const { clock, a, b } = queueOf()
    expect(await b.breakers.read(URL_B)).toBeUndefined()
    a.breakers.open(URL_A, 5_000)
    await expect.poll(async () => redis.raw.zcard(`${queuePrefix(a)}:breakers-open`)).toBe(1)
    clock.now += BREAKER_REFRESH_MS / 2
    // Told by the claim, without reading the key: a reading half a refresh younger than the listing.
    expect((await b.breakers.claimProbe(URL_A)).claimed).toBe(false)
    clock.now += BREAKER_REFRESH_MS / 2
    b.breakers.known(URL_B)
    await expect.poll(() => b.gets()).toBe(1)
  })

  it('keeps the index it has while a listing says nothing changed, and lists once at a time', async () => {
    const { clock, key, b } = queueOfCounted()
    await writeOpen(key(URL_A), String((await redisNow()) + 5_000))
    expect(await b.breakers.read(URL_B)).toBeUndefined()
    clock.now += BREAKER_REFRESH_MS
    b.breakers.known(URL_B)
    b.breakers.known(URL_B)
    await expect.poll(() => b.lists).toEqual([2, 1])
    // Unchanged, the index still lists URL_A: its key is read, and the index is not listed again for it.
    expectOpenFor(await b.breakers.read(URL_A), clock.now, 5_000)
    expect(b.lists).toEqual([2, 1])
    expect(b.gets()).toBe(1)
  })

  it('reads again at once only the readings whose key entered or left the index, not those of keys still listed', async () => {
    const { clock, key, a, b } = queueOf()
    await writeOpen(key(URL_A), String((await redisNow()) + 5_000))
    await writeOpen(key(URL_B), String((await redisNow()) + 5_000))
    expect(await b.breakers.read(`${URL_A}/first`)).toBeUndefined()
    // Read half a refresh after the listing: not due when the next listing is.
    clock.now += BREAKER_REFRESH_MS / 2
    expect(await b.breakers.read(URL_A)).toBeDefined()
    expect(await b.breakers.read(URL_B)).toBeDefined()
    expect(b.gets()).toBe(2)
    // URL_B leaves the index and a third URL enters it; URL_A stays listed.
    a.breakers.close(URL_B)
    a.breakers.open(`${URL_A}/third`, 5_000)
    await expect.poll(async () => redis.raw.zrange(`${queuePrefix(a)}:breakers-open`, '0', '-1')).toHaveLength(2)
    clock.now += BREAKER_REFRESH_MS / 2
    b.breakers.known(`${URL_A}/fourth`)
    await expect.poll(() => b.breakers.known(URL_B)).toBeUndefined()
    await new Promise((resolve) => setTimeout(resolve, 20))
    // B was read again for leaving; A, still listed, waits for its own refresh.
    expect(b.gets()).toBe(3)
  })

  it('does not read again a closed reading the index does not list: the listings answer for it', async () => {
    const { clock, b, lists } = queueOfCounted()
    b.breakers.close(URL_A)
    expect(await b.breakers.read(URL_A)).toBeUndefined()
    await expect.poll(() => lists).toEqual([1])
    clock.now += BREAKER_REFRESH_MS
    expect(b.breakers.known(URL_A)).toBeUndefined()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(b.gets()).toBe(0)
  })

  it('forgets closed readings once many have come, but keeps open ones and those being read', async () => {
    const { key, a, b } = queueOf()
    a.breakers.open(URL_A, 5_000)
    const openUntil = a.breakers.known(URL_A)
    await writeOpen(key(URL_B), String((await redisNow()) + 5_000))
    b.gate.shut()
    const reading = b.breakers.read(URL_B)
    await expect.poll(() => b.gets()).toBe(1)
    for (let index = 0; index < 1_100; index++) {
      a.breakers.close(`${URL_A}/${index}`)
      b.breakers.close(`${URL_A}/${index}`)
    }
    // Its own opening still known, without a read; the read under way still the one answer.
    expect(a.breakers.known(URL_A)).toBe(openUntil)
    expect(a.gets()).toBe(0)
    const again = b.breakers.read(URL_B)
    b.gate.open()
    expectOpenFor(await reading, a.now(), 5_000)
    expect(await again).toBe(await reading)
    expect(b.gets()).toBe(1)
  })

  it('drops from the index a key whose time is up, at the next listing', async () => {
    const { clock, key, b } = queueOf()
    const prefix = key(URL_A).slice(0, key(URL_A).indexOf(':breaker:'))
    await redis.raw.set(key(URL_A), String((await redisNow()) + 5_000))
    await redis.raw.zadd(`${prefix}:breakers-open`, (await redisNow()) - 1, key(URL_A))
    await redis.raw.set(`${prefix}:breakers-open:version`, '7:1700000000000')
    const before = await redisNow()
    expect(await b.breakers.read(URL_A)).toBeUndefined()
    expect(await redis.raw.zcard(`${prefix}:breakers-open`)).toBe(0)
    // The next count, and Redis's time: new even where a restart lost writes and counts the same again.
    const [count, time] = String(await redis.raw.get(`${prefix}:breakers-open:version`)).split(':')
    expect(count).toBe('8')
    expect(Number(time)).toBeGreaterThanOrEqual(before)
    expect(Number(time)).toBeLessThanOrEqual(await redisNow())
    clock.now += BREAKER_REFRESH_MS
    expect(b.breakers.known(URL_A)).toBeUndefined()
    expect(b.gets()).toBe(0)
  })

  it('keeps the time it worked out for an opening while readings find the same one', async () => {
    const { clock, key, b } = queueOf()
    await writeOpen(key(URL_A), String((await redisNow()) + 5_000))
    const first = await b.breakers.read(URL_A)
    clock.now += BREAKER_REFRESH_MS
    b.breakers.known(URL_A)
    await expect.poll(() => b.gets()).toBe(2)
    // A round trip's jitter is no news: the same opening reads as the same time.
    await expect.poll(() => b.breakers.known(URL_A)).toBe(first)
  })

  it('does not start a second reading while one is under way', async () => {
    const { clock, key, b } = queueOf()
    await writeOpen(key(URL_A), String((await redisNow()) + 5_000))
    const first = await b.breakers.read(URL_A)
    await writeOpen(key(URL_A), String((await redisNow()) + 8_000))
    clock.now += BREAKER_REFRESH_MS
    b.gate.shut()
    expect(b.breakers.known(URL_A)).toBe(first)
    await expect.poll(() => b.gets()).toBe(2)
    clock.now += BREAKER_REFRESH_MS
    expect(b.breakers.known(URL_A)).toBe(first)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(b.gets()).toBe(2)
    b.gate.open()
    await expect.poll(() => b.breakers.known(URL_A)).not.toBe(first)
  })

  it('asks Redis again, and waits for it, as long as the readings of a URL fail; the errors are heard', async () => {
    const { prefix, clock, key } = queueOf()
    await writeOpen(key(URL_A), String((await redisNow()) + 5_000))
    let fail = true
    const errors: Error[] = []
    const flaky = new SharedBreakers({
      store: async () => {
        if (fail) throw new Error('Redis is restarting')
        return redis.raw
      },
      prefix,
      timeoutMs: TIMEOUT_MS,
      coolDownMs: COOL_DOWN_MS,
      now: () => clock.now,
      failed: (error) => errors.push(error),
    })
    expect(await flaky.read(URL_A)).toBeUndefined()
    // The index could not be read, nor the URL's key.
    expect(errors.map((error) => error.message)).toEqual(['Redis is restarting', 'Redis is restarting'])
    fail = false
    expectOpenFor(await flaky.read(URL_A), clock.now, 5_000)
  })

  it('reads a value that is not a time as nobody holding the breaker open', async () => {
    const { key, b } = queueOf()
    await writeOpen(key(URL_A), 'open')
    expect(await b.breakers.read(URL_A)).toBeUndefined()
    expect(await b.breakers.claimProbe(URL_A)).toEqual({ claimed: true })
  })

  it.each(['inf', '1e400', '99999999999999999999', '-99999999999999999999', '-5'])(
    'reads a key that holds no opening it could have written (%s) as nobody holding the breaker open, and lets one probe',
    async (value) => {
      const { key, a, b } = queueOf()
      await writeOpen(key(URL_A), value)
      expect(await b.breakers.read(URL_A)).toBeUndefined()
      expect(await a.breakers.claimProbe(URL_A)).toEqual({ claimed: true })
      expect(await b.breakers.claimProbe(URL_A)).toEqual({ claimed: false })
    },
  )

  it('follows its own opening at once, and keeps the key through the cool-down and four timeouts after it', async () => {
    const { clock, key, a } = queueOf()
    const before = await redisNow()
    a.breakers.open(URL_A, 10_000)
    expect(await a.breakers.read(URL_A)).toBe(clock.now + 10_000)
    expect(a.gets()).toBe(0)
    await expect.poll(() => redis.raw.exists(key(URL_A))).toBe(1)
    // Until when, on Redis's clock.
    const until = Number(await redis.raw.get(key(URL_A)))
    expect(until).toBeGreaterThanOrEqual(before + 10_000)
    expect(until).toBeLessThanOrEqual((await redisNow()) + 10_000)
    const ttl = 10_000 + COOL_DOWN_MS + 4 * TIMEOUT_MS
    const left = await redis.raw.pttl(key(URL_A))
    expect(left).toBeLessThanOrEqual(ttl)
    expect(left).toBeGreaterThan(ttl - 1_000)
  })

  it('tells every worker what opened a breaker: its code, status and cause, as one bounded line', async () => {
    const { a, b } = queueOf()
    const refused = {
      code: 'ERR_NETWORK' as const,
      cause: new Error(`connect ECONNREFUSED\n\u001b[31m127.0.0.1:9 ${'x'.repeat(300)}`),
    }
    a.breakers.open(URL_A, 10_000, refused)
    expect(a.breakers.openedBy(URL_A)).toBe(refused)
    a.breakers.open(URL_B, 10_000, { code: 'ERR_HTTP_STATUS', status: 503 })
    await expect.poll(async () => (await b.breakers.read(URL_B)) !== undefined).toBe(true)
    expect(b.breakers.openedBy(URL_B)).toEqual({ code: 'ERR_HTTP_STATUS', status: 503 })
    expect(await b.breakers.read(URL_A)).toBeDefined()
    const told = b.breakers.openedBy(URL_A)
    expect(told?.code).toBe('ERR_NETWORK')
    const text = (told?.cause as Error | undefined)?.message
    expect(text).toMatch(/^connect ECONNREFUSED \[31m127\.0\.0\.1:9 x+$/)
    expect(text).toHaveLength(200)
  })

  it.each([
    ['a time alone, as an earlier version writes it', ''],
    ['a failure that is not JSON', ' {"code":'],
    ['a code no answer can open a breaker with', ' {"code":"ERR_CLOSED"}'],
    ['JSON that is not an object', ' 42'],
    ['JSON null', ' null'],
  ])('reads an opening with %s as open, with nothing known of what opened it', async (_, rest) => {
    const { key, b } = queueOf()
    await writeOpen(key(URL_A), `${(await redisNow()) + 5_000}${rest}`)
    expect(await b.breakers.read(URL_A)).toBeDefined()
    expect(b.breakers.openedBy(URL_A)).toBeUndefined()
    expect(await b.breakers.claimProbe(URL_A)).toMatchObject({ claimed: false })
  })

  it('keeps at most 200 characters of a cause another writer left in the key', async () => {
    const { key, b } = queueOf()
    await writeOpen(
      key(URL_A),
      `${(await redisNow()) + 5_000} ${JSON.stringify({ code: 'ERR_NETWORK', cause: 'x'.repeat(500) })}`,
    )
    expect(await b.breakers.read(URL_A)).toBeDefined()
    expect((b.breakers.openedBy(URL_A)?.cause as Error | undefined)?.message).toBe('x'.repeat(200))
  })

  it('keeps a status only when it is a whole number', async () => {
    const { key, b } = queueOf()
    await writeOpen(key(URL_A), `${(await redisNow()) + 5_000} {"code":"ERR_HTTP_STATUS","status":"503","cause":7}`)
    expect(await b.breakers.read(URL_A)).toBeDefined()
    expect(b.breakers.openedBy(URL_A)).toEqual({ code: 'ERR_HTTP_STATUS' })
  })

  it('reads its own opening back as the time it gave it', async () => {
    const { clock, key, a } = queueOf()
    a.breakers.open(URL_A, 10_000)
    await expect.poll(() => redis.raw.exists(key(URL_A))).toBe(1)
    clock.now += BREAKER_REFRESH_MS
    a.breakers.known(URL_A)
    await expect.poll(() => a.gets()).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(a.breakers.known(URL_A)).toBe(clock.now - BREAKER_REFRESH_MS + 10_000)
  })

  it('tells every worker of a close, in its own process at once', async () => {
    const { key, a, b } = queueOf()
    a.breakers.open(URL_A, 5_000)
    await expect.poll(() => redis.raw.get(key(URL_A))).not.toBeNull()
    a.breakers.close(URL_A)
    expect(await a.breakers.read(URL_A)).toBeUndefined()
    await expect.poll(() => redis.raw.exists(key(URL_A))).toBe(0)
    expect(await b.breakers.read(URL_A)).toBeUndefined()
    expect(a.gets()).toBe(0)
  })

  it('lets nobody probe while the breaker is open: says until when, and remembers it without reading', async () => {
    const { clock, key, b } = queueOf()
    await writeOpen(key(URL_A), String((await redisNow()) + 5_000))
    const claim = await b.breakers.claimProbe(URL_A)
    expect(claim.claimed).toBe(false)
    expectOpenFor(claim.openUntil, clock.now, 5_000)
    expect(await b.breakers.read(URL_A)).toBe(claim.openUntil)
    expect(b.gets()).toBe(0)
  })

  it('lets one worker probe from the instant the cool-down ends, or when nobody holds the breaker', async () => {
    const { key, a, b } = queueOf()
    await writeOpen(key(URL_A), String(await redisNow()))
    expect(await a.breakers.claimProbe(URL_A)).toEqual({ claimed: true })
    // Another worker probes: no time to tell.
    expect(await b.breakers.claimProbe(URL_A)).toEqual({ claimed: false })
    expect(await b.breakers.claimProbe(URL_B)).toEqual({ claimed: true })
  })

  it('holds a claimed probe for a timeout and a second', async () => {
    const { key, a } = queueOf()
    expect(await a.breakers.claimProbe(URL_A)).toEqual({ claimed: true })
    const left = await redis.raw.pttl(`${key(URL_A)}:probe`)
    expect(left).toBeLessThanOrEqual(TIMEOUT_MS + 1_000)
    expect(left).toBeGreaterThan(TIMEOUT_MS)
  })

  it.each(['open', 'close'] as const)(
    'ends the probe when its answer %ss the breaker: the next probe may be claimed',
    async (how) => {
      const { a, b } = queueOf()
      expect(await a.breakers.claimProbe(URL_A)).toEqual({ claimed: true })
      if (how === 'open') a.breakers.open(URL_A, 0)
      else a.breakers.close(URL_A)
      await expect.poll(async () => (await b.breakers.claimProbe(URL_A)).claimed).toBe(true)
      expect(a.errors).toEqual([])
    },
  )

  it('works in its own process without Redis: no opening read, every probe claimed, each error heard', async () => {
    const { breakers, errors } = unreachable()
    expect(await breakers.read(URL_A)).toBeUndefined()
    expect(await breakers.claimProbe(URL_A)).toEqual({ claimed: true })
    breakers.open(URL_A, 5_000)
    expect(await breakers.read(URL_A)).toBe(1_700_000_005_000)
    breakers.close(URL_A)
    expect(await breakers.read(URL_A)).toBeUndefined()
    // The index's first listing and the URL's key, the claim, the opening, the close.
    await expect.poll(() => errors.length).toBe(5)
    expect(errors.every((error) => error.message === 'no Redis')).toBe(true)
  })
})

describe.runIf(redis.available)('SharedBreakers between workers whose clocks disagree', () => {
  it.each([
    ['10 minutes fast', 600_000],
    ['10 minutes slow', -600_000],
  ])(
    'holds a URL opened by a worker %s for its cool-down at a correct one, and the other way round',
    async (_, skewMs) => {
      const prefix = `bull:breakers-${++queues}`
      const clock = { now: Date.now() }
      const skewed = workerOf(prefix, clock, skewMs)
      const correct = workerOf(prefix, clock)
      skewed.breakers.open(URL_A, COOL_DOWN_MS)
      await expect.poll(async () => (await correct.breakers.claimProbe(URL_B)).claimed).toBe(true)
      expectOpenFor(await correct.breakers.read(URL_A), correct.now(), COOL_DOWN_MS)
      correct.breakers.open(URL_B, COOL_DOWN_MS)
      await expect
        .poll(() => redis.raw.exists(`${prefix}:breaker:${createHash('sha1').update(URL_B).digest('hex')}`))
        .toBe(1)
      expectOpenFor(await skewed.breakers.read(URL_B), skewed.now(), COOL_DOWN_MS)
      // And the probe is claimable once the cool-down is over on Redis's clock, whoever asks.
      await new Promise((resolve) => setTimeout(resolve, COOL_DOWN_MS + 50))
      expect(await skewed.breakers.claimProbe(URL_A)).toEqual({ claimed: true })
      expect(await correct.breakers.claimProbe(URL_B)).toEqual({ claimed: true })
    },
  )
})
