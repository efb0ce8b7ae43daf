import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { MAX_TIMER_MS } from '../../src/core/timers.js'
import { MemoryRetryStore } from '../../src/webhook/delivery/retry-store.js'
import { RetryScheduler } from '../../src/webhook/delivery/scheduler.js'

// The scheduler's rules on a fake clock: which item runs at which instant is the subject, so the
// clock is moved by hand instead of waited on.
const T0 = 1_700_000_000_000
beforeEach(() => {
  vi.useFakeTimers({ now: T0 })
})
afterEach(() => {
  vi.useRealTimers()
})

interface Item {
  readonly id: string
  readonly dueAt: number
}

function scheduler(): { scheduler: RetryScheduler<Item>; ran: string[] } {
  const ran: string[] = []
  return {
    scheduler: new RetryScheduler<Item>(
      new MemoryRetryStore(),
      (item) => ran.push(item.id),
      () => Date.now(),
    ),
    ran,
  }
}

describe('RetryScheduler', () => {
  it('runs an item at its due time, not a millisecond before', () => {
    const { scheduler: retries, ran } = scheduler()
    retries.schedule({ id: 'a', dueAt: T0 + 1_000 })
    vi.advanceTimersByTime(999)
    expect(ran).toEqual([])
    expect(retries.size).toBe(1)
    vi.advanceTimersByTime(1)
    expect(ran).toEqual(['a'])
    expect(retries.size).toBe(0)
  })

  it('runs an item that is already due on the next timer turn', () => {
    const { scheduler: retries, ran } = scheduler()
    retries.schedule({ id: 'late', dueAt: T0 - 5_000 })
    expect(ran).toEqual([])
    vi.advanceTimersByTime(0)
    expect(ran).toEqual(['late'])
  })

  it('runs an earlier item scheduled after a later one at its own time', () => {
    const { scheduler: retries, ran } = scheduler()
    retries.schedule({ id: 'later', dueAt: T0 + 5_000 })
    retries.schedule({ id: 'earlier', dueAt: T0 + 1_000 })
    vi.advanceTimersByTime(1_000)
    expect(ran).toEqual(['earlier'])
    vi.advanceTimersByTime(4_000)
    expect(ran).toEqual(['earlier', 'later'])
  })

  it('does not postpone a waiting item when a later one is scheduled', () => {
    const { scheduler: retries, ran } = scheduler()
    retries.schedule({ id: 'first', dueAt: T0 + 1_000 })
    retries.schedule({ id: 'second', dueAt: T0 + 1_000 })
    retries.schedule({ id: 'third', dueAt: T0 + 3_000 })
    vi.advanceTimersByTime(1_000)
    expect(ran.sort()).toEqual(['first', 'second'])
    vi.advanceTimersByTime(2_000)
    expect(ran).toContain('third')
  })

  it('runs every item due by then in one firing, in due order, and waits for the rest', () => {
    const { scheduler: retries, ran } = scheduler()
    retries.schedule({ id: 'c', dueAt: T0 + 30 })
    retries.schedule({ id: 'a', dueAt: T0 + 10 })
    retries.schedule({ id: 'b', dueAt: T0 + 20 })
    retries.schedule({ id: 'd', dueAt: T0 + 2_000 })
    // The clock jumps past three due times before the timer gets to run (a busy event loop).
    vi.setSystemTime(T0 + 30)
    vi.advanceTimersToNextTimer()
    expect(ran).toEqual(['a', 'b', 'c'])
    expect(retries.size).toBe(1)
    vi.advanceTimersByTime(2_000)
    expect(ran).toEqual(['a', 'b', 'c', 'd'])
  })

  it('keeps a single timer however many items wait', () => {
    const { scheduler: retries } = scheduler()
    for (let index = 0; index < 100; index++) retries.schedule({ id: String(index), dueAt: T0 + 1_000 + index })
    expect(vi.getTimerCount()).toBe(1)
  })

  it('waits a due time beyond the longest timer delay in steps, running nothing early', () => {
    const { scheduler: retries, ran } = scheduler()
    const dueAt = T0 + MAX_TIMER_MS + 10_000
    retries.schedule({ id: 'far', dueAt })
    vi.advanceTimersByTime(MAX_TIMER_MS)
    expect(ran).toEqual([])
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(9_999)
    expect(ran).toEqual([])
    vi.advanceTimersByTime(1)
    expect(ran).toEqual(['far'])
  })

  it('stop() hands back every waiting item, and nothing runs after it', () => {
    const { scheduler: retries, ran } = scheduler()
    retries.schedule({ id: 'a', dueAt: T0 + 1_000 })
    retries.schedule({ id: 'b', dueAt: T0 + 2_000 })
    expect(
      retries
        .stop()
        .map((item) => item.id)
        .sort(),
    ).toEqual(['a', 'b'])
    expect(retries.size).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(5_000)
    expect(ran).toEqual([])
  })

  it('schedules again after stop(), at the new item’s own time', () => {
    const { scheduler: retries, ran } = scheduler()
    retries.schedule({ id: 'old', dueAt: T0 + 1_000 })
    retries.stop()
    retries.schedule({ id: 'new', dueAt: T0 + 5_000 })
    vi.advanceTimersByTime(4_999)
    expect(ran).toEqual([])
    vi.advanceTimersByTime(1)
    expect(ran).toEqual(['new'])
  })

  it('arms again for an item scheduled after the timer fired and emptied the store', () => {
    const { scheduler: retries, ran } = scheduler()
    retries.schedule({ id: 'a', dueAt: T0 + 1_000 })
    vi.advanceTimersByTime(1_000)
    retries.schedule({ id: 'b', dueAt: T0 + 9_000 })
    vi.advanceTimersByTime(7_999)
    expect(ran).toEqual(['a'])
    vi.advanceTimersByTime(1)
    expect(ran).toEqual(['a', 'b'])
  })
})
