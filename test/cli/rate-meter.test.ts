import { describe, expect, it } from 'vitest'
import { RateMeter } from '../../src/cli/dev/rate-meter.js'

describe("RateMeter (the live view's rates)", () => {
  it('averages over the time since start until ten seconds have passed, then over the last ten', () => {
    const start = 1_000_000
    const meter = new RateMeter(start)
    for (let index = 0; index < 6; index++) meter.add(start + 100)
    expect(meter.perSecond(start + 500)).toBe(6)
    expect(meter.perSecond(start + 2_000)).toBe(3)
    for (let second = 1; second < 10; second++) meter.add(start + second * 1_000)
    // The ten buckets hold seconds 0-9: 6 + 9 events.
    expect(meter.perSecond(start + 9_999)).toBeCloseTo(15 / 9.999, 6)
    // Ten seconds on, the first second's six events have left the window.
    expect(meter.perSecond(start + 10_000)).toBe(0.9)
    expect(meter.perSecond(start + 60_000)).toBe(0)
  })
})
