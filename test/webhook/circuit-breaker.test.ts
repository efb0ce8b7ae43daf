// One URL's circuit breaker on a clock moved by hand: which attempt may start when, what each
// outcome does to it, and what its window counts.
import { describe, expect, it } from 'vitest'
import { BREAKER_DEFAULTS, CircuitBreaker, type CircuitState } from '../../src/webhook/delivery/circuit-breaker.js'

function breaker(failures = 3, coolDownMs = 1_000, window: { failureRate?: number; windowMs?: number } = {}) {
  const changes: CircuitState[] = []
  const changed = (state: CircuitState) => changes.push(state)
  const rules = { ...BREAKER_DEFAULTS, failures, coolDownMs, ...window }
  return { breaker: new CircuitBreaker(rules), changes, changed }
}

describe('CircuitBreaker', () => {
  it('lets every attempt through while closed, and opens on the failure that completes the run', () => {
    const { breaker: b, changes, changed } = breaker(3)
    expect(b.state).toBe('closed')
    expect(b.allows(0, changed)).toBe('attempt')
    b.record(true, false, 10, changed)
    b.record(true, false, 20, changed)
    expect(b.state).toBe('closed')
    expect(b.allows(25, changed)).toBe('attempt')
    b.record(true, false, 30, changed)
    expect(b.state).toBe('open')
    expect(b.openUntil).toBe(1_030)
    expect(changes).toEqual(['open'])
  })

  it('opens once the window holds `failures` failures that are at least `failureRate` of its attempts', () => {
    const { breaker: b, changed } = breaker(3, 1_000, { failureRate: 0.5, windowMs: 10_000 })
    for (let index = 0; index < 4; index++) b.record(false, false, index, changed)
    // Three failures of seven attempts: enough failures, too few of the attempts.
    for (let index = 0; index < 3; index++) b.record(true, false, 10 + index, changed)
    expect(b.state).toBe('closed')
    // Four of eight: half.
    b.record(true, false, 20, changed)
    expect(b.state).toBe('open')
  })

  it('takes `failures` failures however high their share: two of two do not open a breaker of three', () => {
    const { breaker: b, changed } = breaker(3)
    b.record(true, false, 0, changed)
    b.record(true, false, 1, changed)
    expect(b.state).toBe('closed')
    b.record(true, false, 2, changed)
    expect(b.state).toBe('open')
  })

  it('never opens for a receiver failing one request in twenty, however its failures clump', () => {
    const { breaker: b, changed } = breaker(10, 30_000)
    // 2,000 requests a second for 30 s: 5% fail, and they come in runs of 100 (retries due together).
    for (let second = 0; second < 30; second++) {
      const at = second * 1_000
      for (let index = 0; index < 1_900; index++) b.record(false, false, at + (index % 1_000), changed)
      for (let index = 0; index < 100; index++) b.record(true, false, at + 999, changed)
    }
    expect(b.state).toBe('closed')
  })

  it('forgets attempts once they are a whole window old', () => {
    const { breaker: b, changed } = breaker(2, 1_000, { windowMs: 1_000 })
    for (let index = 0; index < 10; index++) b.record(false, false, 0, changed)
    b.record(true, false, 50, changed)
    b.record(true, false, 60, changed)
    expect(b.state).toBe('closed')
    // A window later, the successes are gone: the failures are the window.
    b.record(true, false, 1_050, changed)
    expect(b.state).toBe('closed')
    b.record(true, false, 1_060, changed)
    expect(b.state).toBe('open')
  })

  it('leaves out a bucket older than the window that no attempt since has taken over', () => {
    // Ten buckets of 100 ms: the failures at 0 sit in the slot of 1,000 to 1,099, untouched at 1,500.
    const { breaker: b, changed } = breaker(3, 1_000, { windowMs: 1_000 })
    b.record(true, false, 0, changed)
    b.record(true, false, 1, changed)
    b.record(true, false, 1_500, changed)
    expect(b.state).toBe('closed')
    b.record(true, false, 1_501, changed)
    b.record(true, false, 1_502, changed)
    expect(b.state).toBe('open')
  })

  it('drops a bucket once it is a window old, and keeps the next one', () => {
    // Ten buckets of 100 ms. At 1,099 the bucket of 0-99 is a window old, that of 100-199 is not.
    const { breaker: b, changed } = breaker(2, 1_000, { windowMs: 1_000, failureRate: 0.7 })
    b.record(false, false, 99, changed)
    b.record(false, false, 100, changed)
    b.record(true, false, 1_099, changed)
    b.record(true, false, 1_099, changed)
    // Two failures of three: short of 70%, with the success at 100 still in the window.
    expect(b.state).toBe('closed')
    b.record(true, false, 1_099, changed)
    expect(b.state).toBe('open')
  })

  it('refuses every attempt while open, until the cool-down ends, then gives exactly one probe', () => {
    const { breaker: b, changes, changed } = breaker(1, 1_000)
    b.record(true, false, 0, changed)
    expect(b.allows(999, changed)).toBeUndefined()
    expect(b.state).toBe('open')
    expect(b.allows(1_000, changed)).toBe('probe')
    expect(b.state).toBe('half-open')
    expect(b.allows(1_001, changed)).toBeUndefined()
    expect(b.allows(5_000, changed)).toBeUndefined()
    expect(changes).toEqual(['open', 'half-open'])
  })

  it('closes when the probe succeeds, and lets attempts through again', () => {
    const { breaker: b, changes, changed } = breaker(1, 100)
    b.record(true, false, 0, changed)
    expect(b.allows(100, changed)).toBe('probe')
    b.record(false, true, 150, changed)
    expect(b.state).toBe('closed')
    expect(b.allows(151, changed)).toBe('attempt')
    expect(changes).toEqual(['open', 'half-open', 'closed'])
    // The window starts again, empty: one failure of a breaker of two does not open it.
    const fresh = breaker(2, 100)
    fresh.breaker.record(true, false, 0, fresh.changed)
    fresh.breaker.record(true, false, 1, fresh.changed)
    expect(fresh.breaker.allows(101, fresh.changed)).toBe('probe')
    fresh.breaker.record(false, true, 101, fresh.changed)
    fresh.breaker.record(true, false, 102, fresh.changed)
    expect(fresh.breaker.state).toBe('closed')
  })

  it('opens again for a whole cool-down when the probe fails, and probes once more after it', () => {
    const { breaker: b, changes, changed } = breaker(5, 100)
    for (let index = 0; index < 5; index++) b.record(true, false, index, changed)
    expect(b.allows(104, changed)).toBe('probe')
    b.record(true, true, 120, changed)
    expect(b.state).toBe('open')
    expect(b.openUntil).toBe(220)
    expect(b.allows(219, changed)).toBeUndefined()
    expect(b.allows(220, changed)).toBe('probe')
    expect(changes).toEqual(['open', 'half-open', 'open', 'half-open'])
  })

  it('is not moved by a late failure of an attempt that started before it opened', () => {
    const { breaker: b, changes, changed } = breaker(1, 100)
    b.record(true, false, 0, changed)
    b.record(true, false, 50, changed)
    expect(b.openUntil).toBe(100)
    expect(b.allows(100, changed)).toBe('probe')
    // A straggler fails while the probe is out: still half-open, still one probe out.
    b.record(true, false, 110, changed)
    expect(b.state).toBe('half-open')
    expect(b.allows(111, changed)).toBeUndefined()
    expect(changes).toEqual(['open', 'half-open'])
  })

  it('closes on any success, a straggler included: the receiver answered', () => {
    const { breaker: b, changes, changed } = breaker(1, 1_000)
    b.record(true, false, 0, changed)
    b.record(false, false, 10, changed)
    expect(b.state).toBe('closed')
    expect(b.allows(11, changed)).toBe('attempt')
    expect(changes).toEqual(['open', 'closed'])
  })

  it('frees the probe when a straggler closes it during a probe, so a later opening can probe again', () => {
    const { breaker: b, changed } = breaker(1, 100)
    b.record(true, false, 0, changed)
    expect(b.allows(100, changed)).toBe('probe')
    b.record(false, false, 101, changed)
    expect(b.state).toBe('closed')
    b.record(true, false, 102, changed)
    expect(b.state).toBe('open')
    expect(b.allows(202, changed)).toBe('probe')
  })
})

describe('CircuitBreaker, the rest of its contract', () => {
  it('tells nothing for a success while closed', () => {
    const { breaker: b, changes, changed } = breaker(2)
    b.record(true, false, 0, changed)
    b.record(false, false, 1, changed)
    b.record(false, false, 2, changed)
    expect(changes).toEqual([])
    expect(b.state).toBe('closed')
  })

  it('takes back a probe that was not sent, so the next caller probes instead', () => {
    const { breaker: b, changed } = breaker(1, 100)
    b.record(true, false, 0, changed)
    expect(b.allows(100, changed)).toBe('probe')
    expect(b.allows(101, changed)).toBeUndefined()
    b.releaseProbe()
    expect(b.state).toBe('half-open')
    expect(b.allows(102, changed)).toBe('probe')
  })
})

describe('CircuitBreaker.follow: what another worker decided', () => {
  it('opens a closed breaker until the time given, and tells it once', () => {
    const { breaker: b, changes, changed } = breaker(3, 1_000)
    b.follow(5_000, changed)
    expect(b.state).toBe('open')
    expect(b.openUntil).toBe(5_000)
    b.follow(5_000, changed)
    expect(changes).toEqual(['open'])
    expect(b.allows(4_999, changed)).toBeUndefined()
    expect(b.allows(5_000, changed)).toBe('probe')
  })

  it('keeps a later opening, and takes a still later one without telling it again', () => {
    const { breaker: b, changes, changed } = breaker(1, 1_000)
    b.record(true, false, 0, changed)
    b.follow(500, changed)
    expect(b.openUntil).toBe(1_000)
    b.follow(3_000, changed)
    expect(b.openUntil).toBe(3_000)
    expect(changes).toEqual(['open'])
  })

  it('opens a half-open breaker again on a later opening (another worker probed and failed)', () => {
    const { breaker: b, changes, changed } = breaker(1, 1_000)
    b.record(true, false, 0, changed)
    expect(b.allows(1_000, changed)).toBe('probe')
    b.follow(1_000, changed)
    expect(b.state).toBe('half-open')
    b.follow(2_500, changed)
    expect(b.state).toBe('open')
    expect(changes).toEqual(['open', 'half-open', 'open'])
  })

  it('closes an open breaker when nobody holds it open, with a fresh count of failures', () => {
    const { breaker: b, changes, changed } = breaker(2, 1_000)
    b.record(true, false, 0, changed)
    b.record(true, false, 1, changed)
    b.follow(undefined, changed)
    expect(b.state).toBe('closed')
    expect(b.allows(2, changed)).toBe('attempt')
    b.record(true, false, 3, changed)
    expect(b.state).toBe('closed')
    b.follow(undefined, changed)
    expect(changes).toEqual(['open', 'closed'])
  })

  it('lets a new probe through after closing, even if one was out', () => {
    const { breaker: b, changed } = breaker(1, 100)
    b.record(true, false, 0, changed)
    expect(b.allows(100, changed)).toBe('probe')
    b.follow(undefined, changed)
    b.record(true, false, 200, changed)
    expect(b.allows(300, changed)).toBe('probe')
  })
})

describe('CircuitBreaker.follow, once closed again', () => {
  it("opens on another worker's opening even when it is older than its own last one", () => {
    const { breaker: b, changes, changed } = breaker(1, 1_000)
    b.record(true, false, 0, changed)
    b.follow(undefined, changed)
    b.follow(500, changed)
    expect(b.state).toBe('open')
    expect(changes).toEqual(['open', 'closed', 'open'])
  })
})
