import { describe, expect, it } from 'vitest'
import { ENTRIES_BEFORE_SWEEP, SweptMap } from '../../src/core/swept-map.js'

describe('SweptMap', () => {
  it('keeps every entry until it holds as many as the first sweep waits for', () => {
    const map = new SweptMap<number, { busy: boolean }>((value) => !value.busy, 4)
    for (let key = 0; key < 3; key++) map.set(key, { busy: false })
    map.sweepIfGrown()
    expect(map.size).toBe(3)
    map.set(3, { busy: false })
    map.sweepIfGrown()
    expect(map.size).toBe(0)
  })

  it('drops only the idle entries, then waits until the map has doubled', () => {
    const map = new SweptMap<number, { busy: boolean }>((value) => !value.busy, 4)
    for (let key = 0; key < 6; key++) map.set(key, { busy: key < 3 })
    map.sweepIfGrown()
    expect([...map.values()].map((value) => value.busy)).toEqual([true, true, true])
    expect(map.get(0)).toEqual({ busy: true })
    expect(map.get(5)).toBeUndefined()
    // Three kept: the next sweep waits for six.
    for (let key = 10; key < 12; key++) map.set(key, { busy: false })
    map.sweepIfGrown()
    expect(map.size).toBe(5)
    map.set(12, { busy: false })
    map.sweepIfGrown()
    expect(map.size).toBe(3)
  })

  it('never waits for fewer entries than the first sweep did', () => {
    const map = new SweptMap<number, { busy: boolean }>((value) => !value.busy, 4)
    map.set(0, { busy: true })
    for (let key = 1; key < 4; key++) map.set(key, { busy: false })
    map.sweepIfGrown()
    expect(map.size).toBe(1)
    map.set(1, { busy: false })
    map.set(2, { busy: false })
    map.sweepIfGrown()
    expect(map.size).toBe(3)
  })

  it('waits for 1,024 entries by default; delete and clear forget entries', () => {
    expect(ENTRIES_BEFORE_SWEEP).toBe(1_024)
    const map = new SweptMap<number, number>(() => true)
    for (let key = 0; key < ENTRIES_BEFORE_SWEEP - 1; key++) map.set(key, key)
    map.sweepIfGrown()
    expect(map.size).toBe(ENTRIES_BEFORE_SWEEP - 1)
    expect(map.delete(0)).toBe(true)
    expect(map.delete(0)).toBe(false)
    map.clear()
    expect(map.size).toBe(0)
  })
})
