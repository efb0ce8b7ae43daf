import { describe, expect, it } from 'vitest'
import { Holdings } from '../../src/client/holdings.js'

const LIMITS = { maxQueueSize: 8, maxQueueBytes: 1_000, highWaterBytes: 400 }

/** Admits `count` messages of `bytes` each and returns what each call answered. */
function admitMany(holdings: Holdings, count: number, bytes: number): boolean[] {
  return Array.from({ length: count }, () => holdings.admit(bytes))
}

describe('Holdings: the bounds on what the client holds', () => {
  it('admits up to maxQueueSize messages and refuses the next, leaving the count as it was', () => {
    const holdings = new Holdings(LIMITS)
    expect(admitMany(holdings, 8, 1)).toEqual(Array(8).fill(true))
    expect(holdings.admit(1)).toBe(false)
    expect(holdings.messages).toBe(8)
  })

  it('admits a message that brings the bytes exactly to maxQueueBytes, and refuses one byte more', () => {
    const exact = new Holdings({ ...LIMITS, highWaterBytes: 1_000 })
    expect([exact.admit(600), exact.admit(400)]).toEqual([true, true])
    const over = new Holdings({ ...LIMITS, highWaterBytes: 1_000 })
    expect([over.admit(600), over.admit(401)]).toEqual([true, false])
    expect(over.messages).toBe(1)
  })

  it('turns backpressure on for a refused message even below the high-water marks', () => {
    const holdings = new Holdings({ maxQueueSize: 100, maxQueueBytes: 1_000, highWaterBytes: 1_000 })
    expect(holdings.admit(1_001)).toBe(false)
    expect(holdings.needDrain).toBe(true)
  })

  it('turns backpressure on when the count reaches half of maxQueueSize, not before', () => {
    const holdings = new Holdings(LIMITS)
    admitMany(holdings, 3, 1)
    expect(holdings.needDrain).toBe(false)
    holdings.admit(1)
    expect(holdings.needDrain).toBe(true)
  })

  it('turns backpressure on when the bytes reach highWaterBytes, not before', () => {
    const holdings = new Holdings({ ...LIMITS, maxQueueSize: 100 })
    holdings.admit(399)
    expect(holdings.needDrain).toBe(false)
    holdings.admit(1)
    expect(holdings.needDrain).toBe(true)
  })

  it('ends backpressure once, when the count is back to a quarter of maxQueueSize', () => {
    const holdings = new Holdings(LIMITS)
    admitMany(holdings, 4, 1)
    holdings.release(1, 1)
    expect(holdings.drained()).toBe(false)
    holdings.release(1, 1)
    expect(holdings.drained()).toBe(true)
    expect(holdings.needDrain).toBe(false)
    expect(holdings.drained()).toBe(false)
  })

  it('ends backpressure only when the bytes are back to half of highWaterBytes', () => {
    const holdings = new Holdings({ ...LIMITS, maxQueueSize: 100 })
    admitMany(holdings, 2, 200)
    holdings.release(1, 199)
    expect(holdings.drained()).toBe(false)
    holdings.release(0, 1)
    expect(holdings.drained()).toBe(true)
  })

  it('needs both marks to end backpressure: few messages but many bytes keep it on', () => {
    const holdings = new Holdings(LIMITS)
    admitMany(holdings, 4, 100)
    holdings.release(3, 100)
    expect(holdings.messages).toBe(1)
    expect(holdings.drained()).toBe(false)
  })

  it('does not report drained when backpressure was never on', () => {
    const holdings = new Holdings(LIMITS)
    holdings.admit(1)
    holdings.release(1, 1)
    expect(holdings.drained()).toBe(false)
  })

  it('counts released messages out, so the bound admits again', () => {
    const holdings = new Holdings(LIMITS)
    admitMany(holdings, 8, 100)
    expect(holdings.admit(100)).toBe(false)
    holdings.release(1, 100)
    expect(holdings.messages).toBe(7)
    expect(holdings.admit(100)).toBe(true)
    expect(holdings.admit(100)).toBe(false)
  })

  it('counts released bytes out, so the byte bound admits again', () => {
    const holdings = new Holdings({ ...LIMITS, highWaterBytes: 1_000 })
    expect(holdings.admit(1_000)).toBe(true)
    expect(holdings.admit(1)).toBe(false)
    holdings.release(0, 500)
    expect(holdings.admit(500)).toBe(true)
  })
})
