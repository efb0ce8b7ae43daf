// ratePerUrl shared by the workers of a queue, in a real Redis on Redis's own clock: a burst of one
// second's worth, then one delivery per interval, each URL on its own schedule. The rates chosen
// leave an interval of slack or more for the round trips, so that a loaded machine cannot pass a
// wait by being slow.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { SharedRates } from '../../src/webhook/bullmq/shared-rates.js'
import { redisForFile } from '../helpers/redis-suite.js'

const redis = redisForFile({ persistent: false })
const URL_A = 'https://hooks.example.com/a'
const URL_B = 'https://hooks.example.com/b'
let queues = 0

/** A worker's shared rates on the file's Redis; `errors` is what `failed` heard. */
function workerOf(prefix: string, perSecond: number) {
  const errors: Error[] = []
  const rates = new SharedRates({
    store: async () => redis.raw,
    prefix,
    perSecond,
    failed: (error) => errors.push(error),
  })
  return { rates, errors }
}

const newPrefix = () => `bull:rates-${++queues}`

/** Takes `count` deliveries to `url` at once; the waits each was answered. */
const takeMany = (rates: SharedRates, url: string, count: number) =>
  Promise.all(Array.from({ length: count }, () => rates.take(url)))

describe('SharedRates', () => {
  it('spaces deliveries 1000 / perSecond ms apart', () => {
    expect(workerOf(newPrefix(), 4).rates.interval).toBe(250)
    expect(workerOf(newPrefix(), 0.5).rates.interval).toBe(2_000)
  })
})

/** Four of the waits are 0 (a second's worth at 4/s goes at once); the others say when, within two intervals. */
function expectBurstOfFour(waits: number[], interval: number): void {
  expect(waits.filter((wait) => wait === 0)).toHaveLength(4)
  for (const wait of waits.filter((wait) => wait !== 0)) {
    expect(wait).toBeGreaterThan(0)
    expect(wait).toBeLessThanOrEqual(2 * interval)
  }
}

describe.runIf(redis.available)('SharedRates on Redis', () => {
  it("lets a burst of one second's worth go at once, then says how long until the next may go", async () => {
    const { rates, errors } = workerOf(newPrefix(), 4)
    const waits = await takeMany(rates, URL_A, 6)
    expectBurstOfFour(waits, rates.interval)
    expect(errors).toEqual([])
  })

  it('lets one delivery go at a time below one a second, the next an interval later', async () => {
    const { rates } = workerOf(newPrefix(), 0.5)
    expect(await rates.take(URL_A)).toBe(0)
    const wait = await rates.take(URL_A)
    expect(wait).toBeGreaterThan(1_000)
    expect(wait).toBeLessThanOrEqual(2_000)
  })

  it('keeps one schedule per URL', async () => {
    const { rates } = workerOf(newPrefix(), 1)
    expect(await rates.take(URL_A)).toBe(0)
    expect(await rates.take(URL_A)).toBeGreaterThan(0)
    expect(await rates.take(URL_B)).toBe(0)
  })

  it("shares a URL's schedule among the workers of a queue, and only among them", async () => {
    const prefix = newPrefix()
    const [a, b] = [workerOf(prefix, 1), workerOf(prefix, 1)]
    expect(await a.rates.take(URL_A)).toBe(0)
    expect(await b.rates.take(URL_A)).toBeGreaterThan(0)
    expect(await workerOf(newPrefix(), 1).rates.take(URL_A)).toBe(0)
  })

  it("keeps a URL's schedule under the queue's prefix, `rate:` and the URL's hash, for as long as it matters", async () => {
    const prefix = newPrefix()
    const { rates } = workerOf(prefix, 1)
    await rates.take(URL_A)
    const key = `${prefix}:rate:${createHash('sha1').update(URL_A).digest('hex')}`
    expect(await redis.raw.exists(key)).toBe(1)
    expect(await redis.raw.pttl(key)).toBeGreaterThan(0)
  })

  it('lets the delivery go when Redis cannot say, and reports the error', async () => {
    const errors: Error[] = []
    const rates = new SharedRates({
      store: () => Promise.reject(new Error('no Redis')),
      prefix: newPrefix(),
      perSecond: 1,
      failed: (error) => errors.push(error),
    })
    expect(await rates.take(URL_A)).toBe(0)
    expect(errors.map((error) => error.message)).toEqual(['no Redis'])
  })

  it.each(['garbage', 'nan', 'inf', '1e400', '1e15', '-1e15'])(
    'starts the schedule again over a key that holds no schedule it could have written (%s), and keeps the rate after',
    async (value) => {
      const prefix = newPrefix()
      const { rates, errors } = workerOf(prefix, 4)
      await redis.raw.set(`${prefix}:rate:${createHash('sha1').update(URL_A).digest('hex')}`, value)
      const waits = await takeMany(rates, URL_A, 6)
      expectBurstOfFour(waits, rates.interval)
      expect(errors).toEqual([])
    },
  )
})
