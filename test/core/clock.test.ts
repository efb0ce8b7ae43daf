import { afterEach, expect, it, vi } from 'vitest'
import { isoNow, monotonicNow, monotonicSince } from '../../src/core/clock.js'

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

it('gives the current time as ISO 8601 with ms and Z, following the clock across milliseconds', () => {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2024, 1, 29, 23, 59, 59, 998) })
  expect(isoNow()).toBe('2024-02-29T23:59:59.998Z')
  expect(isoNow()).toBe('2024-02-29T23:59:59.998Z')
  vi.setSystemTime(Date.UTC(2024, 1, 29, 23, 59, 59, 999))
  expect(isoNow()).toBe('2024-02-29T23:59:59.999Z')
  vi.setSystemTime(Date.UTC(2024, 2, 1))
  expect(isoNow()).toBe('2024-03-01T00:00:00.000Z')
})

it('counts whole milliseconds since an origin on the monotonic clock, exact past 31 bits', () => {
  const now = vi.spyOn(performance, 'now').mockReturnValue(1_000)
  const origin = monotonicNow()
  const clock = monotonicSince(origin)
  expect(clock()).toBe(0)
  now.mockReturnValue(1_250)
  expect(clock()).toBe(250)
  // 30 days on: past what fits in 31 bits, the count goes on instead of wrapping.
  now.mockReturnValue(1_000 + 30 * 86_400_000)
  expect(clock()).toBe(30 * 86_400_000)
  // A step of the wall clock changes nothing.
  vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2001, 0, 1) })
  expect(clock()).toBe(30 * 86_400_000)
})
