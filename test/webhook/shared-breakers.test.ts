// The breakers every worker of a queue shares, in a real Redis, on a clock the test moves: what a
// worker reads and when, what an opening or a close writes, and who may probe after a cool-down.
// Redis's clock times every opening: a worker hears how long a breaker is still open, and counts
// that on its own clock, however far that clock is from the others'.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { BREAKER_REFRESH_MS, type BreakerStore, SharedBreakers } from '../../src/webhook/bullmq/shared-breakers.js'
import { redisForFile } from '../helpers/redis-suite.js'

const redis = redisForFile({ persistent: false })
const URL_A = 'https://hooks.example.com/a'
const URL_B = 'https://hooks.example.com/b'
const TIMEOUT_MS = 2_000
const COOL_DOWN_MS = 1_000
let queues = 0

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
  const store: BreakerStore = {
    eval: async (script, keys, ...args) => {
      // A reading is the one script with one key; openings, closings and claims name the probe's too.
      if (keys === 1) {
        gets++
        await held
      }
      return redis.raw.eval(script, keys, ...args)
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
  return { breakers, errors, gate, gets: () => gets, now: () => clock.now + skewMs }
}

/** Two workers of one new queue, on one clock. */
function queueOf() {
  const prefix = `bull:breakers-${++queues}`
  const clock = { now: 1_700_000_000_000 }
  const key = (url: string) => `${prefix}:breaker:${createHash('sha1').update(url).digest('hex')}`
  return { prefix, clock, key, a: workerOf(prefix, clock), b: workerOf(prefix, clock) }
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
    await redis.raw.set(key(URL_A), String((await redisNow()) + 5_000))
    b.gate.shut()
    const asked = [b.breakers.read(URL_A), b.breakers.read(URL_A)]
    b.gate.open()
    const [first, second] = await Promise.all(asked)
    expectOpenFor(first, clock.now, 5_000)
    expect(second).toBe(first)
    expect(b.gets()).toBe(1)
  })

  it('answers from its last reading after that, and reads again in the background once it is BREAKER_REFRESH_MS old', async () => {
    const { clock, key, b } = queueOf()
    expect(await b.breakers.read(URL_A)).toBeUndefined()
    await redis.raw.set(key(URL_A), String((await redisNow()) + 5_000))
    clock.now += BREAKER_REFRESH_MS - 1
    expect(await b.breakers.read(URL_A)).toBeUndefined()
    expect(b.gets()).toBe(1)
    clock.now += 1
    // Due for a new reading: this answer is the old one, the next ones hear the new.
    expect(b.breakers.known(URL_A)).toBeUndefined()
    await expect.poll(() => b.breakers.known(URL_A)).not.toBeUndefined()
    expectOpenFor(b.breakers.known(URL_A) as number, clock.now, 5_000)
    expect(b.gets()).toBe(2)
  })

  it('keeps the time it worked out for an opening while readings find the same one', async () => {
    const { clock, key, b } = queueOf()
    await redis.raw.set(key(URL_A), String((await redisNow()) + 5_000))
    const first = await b.breakers.read(URL_A)
    clock.now += BREAKER_REFRESH_MS
    b.breakers.known(URL_A)
    await expect.poll(() => b.gets()).toBe(2)
    // A round trip's jitter is no news: the same opening reads as the same time.
    await expect.poll(() => b.breakers.known(URL_A)).toBe(first)
  })

  it('does not start a second reading while one is under way', async () => {
    const { clock, key, b } = queueOf()
    expect(await b.breakers.read(URL_A)).toBeUndefined()
    await redis.raw.set(key(URL_A), String((await redisNow()) + 5_000))
    clock.now += BREAKER_REFRESH_MS
    b.gate.shut()
    expect(b.breakers.known(URL_A)).toBeUndefined()
    await expect.poll(() => b.gets()).toBe(2)
    clock.now += BREAKER_REFRESH_MS
    expect(b.breakers.known(URL_A)).toBeUndefined()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(b.gets()).toBe(2)
    b.gate.open()
    await expect.poll(() => b.breakers.known(URL_A)).not.toBeUndefined()
  })

  it('asks Redis again, and waits for it, as long as the readings of a URL fail; the errors are heard', async () => {
    const { prefix, clock, key } = queueOf()
    await redis.raw.set(key(URL_A), String((await redisNow()) + 5_000))
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
    expect(errors.map((error) => error.message)).toEqual(['Redis is restarting'])
    fail = false
    expectOpenFor(await flaky.read(URL_A), clock.now, 5_000)
  })

  it('reads a value that is not a time as nobody holding the breaker open', async () => {
    const { key, b } = queueOf()
    await redis.raw.set(key(URL_A), 'open')
    expect(await b.breakers.read(URL_A)).toBeUndefined()
    expect(await b.breakers.claimProbe(URL_A)).toEqual({ claimed: true })
  })

  it.each(['inf', '1e400', '99999999999999999999', '-99999999999999999999', '-5'])(
    'reads a key that holds no opening it could have written (%s) as nobody holding the breaker open, and lets one probe',
    async (value) => {
      const { key, a, b } = queueOf()
      await redis.raw.set(key(URL_A), value)
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
    await redis.raw.set(key(URL_A), `${(await redisNow()) + 5_000}${rest}`)
    expect(await b.breakers.read(URL_A)).toBeDefined()
    expect(b.breakers.openedBy(URL_A)).toBeUndefined()
    expect(await b.breakers.claimProbe(URL_A)).toMatchObject({ claimed: false })
  })

  it('keeps at most 200 characters of a cause another writer left in the key', async () => {
    const { key, b } = queueOf()
    await redis.raw.set(
      key(URL_A),
      `${(await redisNow()) + 5_000} ${JSON.stringify({ code: 'ERR_NETWORK', cause: 'x'.repeat(500) })}`,
    )
    expect(await b.breakers.read(URL_A)).toBeDefined()
    expect((b.breakers.openedBy(URL_A)?.cause as Error | undefined)?.message).toBe('x'.repeat(200))
  })

  it('keeps a status only when it is a whole number', async () => {
    const { key, b } = queueOf()
    await redis.raw.set(key(URL_A), `${(await redisNow()) + 5_000} {"code":"ERR_HTTP_STATUS","status":"503","cause":7}`)
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
    await redis.raw.set(key(URL_A), String((await redisNow()) + 5_000))
    const claim = await b.breakers.claimProbe(URL_A)
    expect(claim.claimed).toBe(false)
    expectOpenFor(claim.openUntil, clock.now, 5_000)
    expect(await b.breakers.read(URL_A)).toBe(claim.openUntil)
    expect(b.gets()).toBe(0)
  })

  it('lets one worker probe from the instant the cool-down ends, or when nobody holds the breaker', async () => {
    const { key, a, b } = queueOf()
    await redis.raw.set(key(URL_A), String(await redisNow()))
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
    await expect.poll(() => errors.length).toBe(4)
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
