import { describe, expect, it } from 'vitest'
import { Repeats } from '../../src/cli/serve/repeats.js'

function clock() {
  const time = { now: 1_000 }
  return { time, read: () => time.now }
}

describe('Repeats: a line per kind per window, the rest counted', () => {
  it('writes the first line of a kind, counts the others of its window, and writes one again once it is over', () => {
    const { time, read } = clock()
    const repeats = new Repeats(10_000, read)
    expect(repeats.take('error redis down')).toBe(true)
    expect(repeats.take('error redis down')).toBe(false)
    time.now += 9_999
    expect(repeats.take('error redis down')).toBe(false)
    // Another kind is its own, in the same window.
    expect(repeats.take('warn no aof')).toBe(true)
    time.now += 1
    expect(repeats.take('error redis down')).toBe(true)
    expect(repeats.take('error redis down')).toBe(false)
  })

  it('reports what it held back, once, and counts the next of the kind into the window the report began', () => {
    const { time, read } = clock()
    const repeats = new Repeats(10_000, read)
    expect(repeats.unreported()).toEqual([])
    repeats.take('a')
    repeats.take('a')
    repeats.take('a')
    repeats.take('b')
    expect(repeats.unreported()).toEqual([{ kind: 'a', held: 2 }])
    expect(repeats.unreported()).toEqual([])
    // A report is the kind's line of its window: what comes next within it is held again.
    time.now += 5_000
    expect(repeats.take('a')).toBe(false)
    time.now += 5_000
    expect(repeats.unreported()).toEqual([{ kind: 'a', held: 1 }])
  })

  it('forgets a kind whose window is over with nothing held, so that its next line is written at once', () => {
    const { time, read } = clock()
    const repeats = new Repeats(10_000, read)
    repeats.take('a')
    time.now += 9_999
    repeats.unreported()
    // Still within the window: known, and held.
    expect(repeats.take('a')).toBe(false)
    time.now += 10_000
    expect(repeats.unreported()).toEqual([{ kind: 'a', held: 1 }])
    time.now += 10_000
    expect(repeats.unreported()).toEqual([])
    time.now += 1
    expect(repeats.take('a')).toBe(true)
    expect(repeats.take('a')).toBe(false)
  })

  it('follows at most 100 kinds: a line of another kind is written whole, never dropped', () => {
    const { read } = clock()
    const repeats = new Repeats(10_000, read)
    for (let n = 0; n < 100; n++) expect(repeats.take(`kind ${n}`)).toBe(true)
    expect(repeats.take('kind 0')).toBe(false)
    expect(repeats.take('kind 100')).toBe(true)
    expect(repeats.take('kind 100')).toBe(true)
  })
})
