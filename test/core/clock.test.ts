import { afterEach, expect, it, vi } from 'vitest'
import { isoNow } from '../../src/core/clock.js'

afterEach(() => {
  vi.useRealTimers()
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
