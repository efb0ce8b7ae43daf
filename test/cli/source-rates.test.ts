// The request rate of each source at one ingest process: a burst of one second's worth, then one
// request each 1000 / rate ms; another source is never held by it; its own rateLimit wins over the
// default; 0 is no limit; refusals are reported once a second at most, with their count.
import { describe, expect, it } from 'vitest'
import type { ServedSource } from '../../src/cli/serve/serve-server.js'
import { DEFAULT_RATE_LIMIT, SourceRates } from '../../src/cli/serve/source-rates.js'

const source = (id: string, rateLimit?: number): ServedSource => ({
  id,
  destinations: [],
  ...(rateLimit === undefined ? {} : { rateLimit }),
})

/** A clock the test moves by hand. */
function clock(start = 1_000) {
  const time = { now: start }
  return { time, read: () => time.now }
}

/** How many of `count` requests at this instant are taken. */
const taken = (rates: SourceRates, of: ServedSource, count: number) =>
  Array.from({ length: count }, () => rates.admit(of).waitMs).filter((wait) => wait === 0).length

describe('SourceRates', () => {
  it('takes a burst of one second of requests, then one each 1000 / rate ms', () => {
    const { time, read } = clock()
    const rates = new SourceRates(10, read)
    const shop = source('shop')
    expect(taken(rates, shop, 15)).toBe(10)
    expect(rates.admit(shop).waitMs).toBe(100)
    time.now += 99
    expect(rates.admit(shop).waitMs).toBe(1)
    time.now += 1
    expect(rates.admit(shop).waitMs).toBe(0)
    expect(rates.admit(shop).waitMs).toBe(100)
    // A source that waited a second has its whole burst again, and no more.
    time.now += 5_000
    expect(taken(rates, shop, 12)).toBe(10)
  })

  it('holds each source to its own rate: a flood of one takes nothing of another', () => {
    const { read } = clock()
    const rates = new SourceRates(5, read)
    expect(taken(rates, source('flood'), 1_000)).toBe(5)
    expect(taken(rates, source('quiet'), 5)).toBe(5)
  })

  it("takes a source's own rateLimit over the default, and 0 as no limit", () => {
    const { read } = clock()
    const rates = new SourceRates(2, read)
    expect(taken(rates, source('big', 50), 60)).toBe(50)
    expect(taken(rates, source('free', 0), 10_000)).toBe(10_000)
    expect(taken(rates, source('small'), 10)).toBe(2)
    expect(taken(new SourceRates(0, read), source('none'), 10_000)).toBe(10_000)
  })

  it('takes one request a second at a rate of 1', () => {
    const { time, read } = clock()
    const rates = new SourceRates(1, read)
    const one = source('one')
    expect(rates.admit(one).waitMs).toBe(0)
    expect(rates.admit(one).waitMs).toBe(1_000)
    time.now += 1_000
    expect(rates.admit(one).waitMs).toBe(0)
  })

  it('reports the first refusal at once, then the count of refusals once a second at most', () => {
    const { time, read } = clock()
    const rates = new SourceRates(1, read)
    const shop = source('shop')
    expect(rates.admit(shop)).toEqual({ waitMs: 0 })
    expect(rates.admit(shop)).toEqual({ waitMs: 1_000, report: 1 })
    time.now += 500
    expect(rates.admit(shop)).toEqual({ waitMs: 500 })
    expect(rates.admit(shop)).toEqual({ waitMs: 500 })
    time.now += 499
    expect(rates.admit(shop)).toEqual({ waitMs: 1 })
    time.now += 0.5
    expect(rates.admit(shop)).toEqual({ waitMs: 1 })
    // A second after the last report: the refusals since, this one counted.
    time.now += 0.5
    expect(rates.admit(shop)).toEqual({ waitMs: 0 })
    expect(rates.admit(shop)).toEqual({ waitMs: 1_000, report: 5 })
    // Another source's refusals are its own.
    const blog = source('blog')
    rates.admit(blog)
    expect(rates.admit(blog)).toEqual({ waitMs: 1_000, report: 1 })
  })

  it('reads the monotonic clock by default, and lets 500 requests a second through', () => {
    const rates = new SourceRates(DEFAULT_RATE_LIMIT)
    expect(DEFAULT_RATE_LIMIT).toBe(500)
    expect(rates.clock()).toBeCloseTo(performance.now(), -2)
    expect(taken(rates, source('shop'), 500)).toBeGreaterThanOrEqual(500)
  })

  it("gives the refusals no later one reported, once, and counts a source's next ones from then", () => {
    const { time, read } = clock()
    const rates = new SourceRates(1, read)
    const shop = source('shop')
    const blog = source('blog')
    rates.admit(shop)
    expect(rates.admit(shop)).toEqual({ waitMs: 1_000, report: 1 })
    rates.admit(shop)
    rates.admit(shop)
    rates.admit(blog)
    expect(rates.unreported()).toEqual([{ source: 'shop', refused: 2 }])
    expect(rates.unreported()).toEqual([])
    // Taken now: the next refusal within a second of it is counted, not reported.
    time.now += 500
    expect(rates.admit(shop)).toEqual({ waitMs: 500 })
    time.now += 1_000
    expect(rates.admit(shop)).toEqual({ waitMs: 0 })
    expect(rates.admit(shop)).toEqual({ waitMs: 1_000, report: 2 })
  })
})
