// RedisClock: what a worker stores for the others is on Redis's clock. Read three times per sync,
// the reading with the shortest round trip kept, and counted on the monotonic clock since.
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  CLOCK_SKEW_WARNING_MS,
  RedisClock,
  skewWarning,
  type TimeSource,
} from '../../src/webhook/bullmq/redis-clock.js'

afterEach(() => {
  vi.restoreAllMocks()
})

/** Redis's `TIME` for `ms` since the epoch: seconds and microseconds, as strings. */
const timeOf = (ms: number): [string, string] => [
  String(Math.floor(ms / 1_000)),
  String(Math.round((ms % 1_000) * 1_000)),
]

/**
 * A Redis whose readings are scripted: each `time()` call is sent at `sent` and answered at
 * `received` on the monotonic clock (what `performance.now()` gives, in that order), with
 * `redis` ms since the epoch.
 */
function scripted(readings: Array<{ sent: number; received: number; redis: number }>): {
  source: TimeSource
  calls: () => number
} {
  const moments = readings.flatMap((reading) => [reading.sent, reading.received])
  vi.spyOn(performance, 'now').mockImplementation(() => moments.shift() ?? 0)
  let calls = 0
  return {
    calls: () => calls,
    source: { time: async () => timeOf((readings[calls++] as { redis: number }).redis) },
  }
}

describe('RedisClock', () => {
  it('reads as the local wall clock before its first reading', () => {
    const clock = new RedisClock()
    expect(Math.abs(clock.now() - Date.now())).toBeLessThanOrEqual(1)
    expect(clock.skewMs).toBe(0)
  })

  it("follows Redis's time, ten minutes off the local clock, and says how far off the local clock is", async () => {
    const clock = new RedisClock()
    const ahead = 600_000
    await clock.sync({ time: async () => timeOf(Date.now() + ahead) })
    expect(Math.abs(clock.now() - (Date.now() + ahead))).toBeLessThanOrEqual(5)
    // The local wall clock is behind Redis's: negative.
    expect(Math.abs(clock.skewMs + ahead)).toBeLessThanOrEqual(5)
  })

  it('keeps the reading with the shortest round trip, the first of equal ones, read at its middle', async () => {
    const base = 1_800_000_000_000
    const clock = new RedisClock()
    const { source, calls } = scripted([
      { sent: 1_000, received: 1_100, redis: base + 50.5 },
      { sent: 2_000, received: 2_010, redis: base + 2_000.25 },
      { sent: 3_000, received: 3_010, redis: base + 9_999 },
    ])
    vi.spyOn(Date, 'now').mockReturnValue(base + 2_010 + 7_000)
    await clock.sync(source)
    expect(calls()).toBe(3)
    // Redis read its clock at 2,005 on the monotonic clock: 2,000.25 ms after base then.
    vi.mocked(performance.now).mockReturnValue(2_005)
    expect(clock.now()).toBe(base + 2_000)
    vi.mocked(performance.now).mockReturnValue(12_005.4)
    expect(clock.now()).toBe(base + 12_001)
    // The wall clock said base + 9,010 at 2,010, so base + 9,005 at the middle: 7,004.75 ahead.
    expect(clock.skewMs).toBe(7_005)
  })

  it('keeps its last reading when a sync fails', async () => {
    const clock = new RedisClock()
    await clock.sync({ time: async () => timeOf(Date.now() + 60_000) })
    const before = clock.now() - Date.now()
    await expect(clock.sync({ time: () => Promise.reject(new Error('Connection is closed.')) })).rejects.toThrow(
      'Connection is closed.',
    )
    expect(Math.abs(clock.now() - Date.now() - before)).toBeLessThanOrEqual(5)
  })
})

describe('skewWarning', () => {
  it('says how far, which way, and what to do', () => {
    expect(skewWarning(12_345)).toMatch(/^eventwire: this worker's clock is 12\.3 s ahead of Redis's\..*NTP/)
    expect(skewWarning(-CLOCK_SKEW_WARNING_MS - 500)).toMatch(/is 2\.5 s behind Redis's/)
  })
})
