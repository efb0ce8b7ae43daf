import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Queue } from '../../src/core/queue.js'
import { countAlive } from '../helpers/gc.js'

type Operation = { kind: 'push'; count: number } | { kind: 'shift'; count: number } | { kind: 'takeAll' }

/** Runs the operations on a Queue and on a plain array side by side; they must agree after each step. */
function agreesWithAnArray(operations: readonly Operation[]): void {
  const queue = new Queue<number>()
  const model: number[] = []
  let next = 0
  for (const operation of operations) {
    if (operation.kind === 'push') {
      for (let index = 0; index < operation.count; index++) {
        queue.push(next)
        model.push(next++)
      }
    } else if (operation.kind === 'shift') {
      for (let index = 0; index < operation.count; index++) expect(queue.shift()).toBe(model.shift())
    } else {
      expect(queue.takeAll()).toEqual(model.splice(0))
    }
    expect(queue.length).toBe(model.length)
    expect(queue.peek()).toBe(model[0])
  }
  expect(queue.takeAll()).toEqual(model)
}

describe('Queue', () => {
  it('gives items back first in, first out, with length and peek telling what waits, for any mix of calls', () => {
    const operation: fc.Arbitrary<Operation> = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), count: fc.integer({ min: 0, max: 1_500 }) }),
      fc.record({ kind: fc.constant('shift' as const), count: fc.integer({ min: 0, max: 1_500 }) }),
      fc.record({ kind: fc.constant('takeAll' as const) }),
    )
    fc.assert(fc.property(fc.array(operation, { maxLength: 12 }), agreesWithAnArray), { numRuns: 100 })
  })

  // The queue drops its consumed head once 1024 items are consumed and they are at least half the array.
  it.each([
    ['1023 of 2048 taken (just short of the drop)', 2_048, 1_023],
    ['1024 of 2048 taken (dropped at the edge)', 2_048, 1_024],
    ['1024 of 2049 taken (not yet half)', 2_049, 1_024],
    ['1025 of 2049 taken', 2_049, 1_025],
    ['all 1024 taken, then more pushed', 1_024, 1_024],
  ])('keeps order and count across the drop of its consumed head: %s', (_name, pushed, shifted) => {
    agreesWithAnArray([
      { kind: 'push', count: pushed },
      { kind: 'shift', count: shifted },
      { kind: 'push', count: 3 },
      { kind: 'shift', count: 2 },
      { kind: 'push', count: 1_100 },
      { kind: 'shift', count: pushed + 1_103 },
      { kind: 'shift', count: 1 },
    ])
  })

  it('answers an empty queue with undefined and length 0, before and after use', () => {
    const queue = new Queue<string>()
    expect([queue.shift(), queue.peek(), queue.length, queue.takeAll()]).toEqual([undefined, undefined, 0, []])
    queue.push('a')
    expect(queue.shift()).toBe('a')
    expect([queue.shift(), queue.peek(), queue.length, queue.takeAll()]).toEqual([undefined, undefined, 0, []])
  })

  describe('memory: consumed items are let go', () => {
    /** A queue holding `count` fresh objects, with a weak reference to each. */
    function filled(count: number): { queue: Queue<object>; watched: WeakRef<object>[] } {
      const queue = new Queue<object>()
      const watched: WeakRef<object>[] = []
      for (let index = 0; index < count; index++) {
        const item = { index }
        queue.push(item)
        watched.push(new WeakRef(item))
      }
      return { queue, watched }
    }

    it('keeps nothing it gave back once it is empty, however few items passed through', async () => {
      const { queue, watched } = filled(10)
      for (let index = 0; index < 10; index++) queue.shift()
      expect(await countAlive(watched)).toBe(0)
    })

    it('lets go of the consumed head once 1024 items were taken and they are at least half of what it holds', async () => {
      const { queue, watched } = filled(2_048)
      for (let index = 0; index < 1_024; index++) queue.shift()
      expect(await countAlive(watched)).toBe(1_024)
    })

    // Bounded memory: the consumed items kept alive are never more than 1023 or the number waiting.
    it('keeps no more consumed items alive than 1023 or the number still waiting, whichever is larger', async () => {
      for (const [pushed, taken] of [
        [3_000, 2_999],
        [5_000, 2_600],
        [10_000, 3_000],
        [10_000, 9_000],
      ] as const) {
        const { queue, watched } = filled(pushed)
        for (let index = 0; index < taken; index++) queue.shift()
        const consumedAlive = (await countAlive(watched)) - queue.length
        expect(consumedAlive).toBeLessThanOrEqual(Math.max(1_023, queue.length))
      }
    })

    it('keeps nothing after takeAll', async () => {
      const { queue, watched } = filled(50)
      queue.shift()
      queue.takeAll()
      expect(await countAlive(watched)).toBe(0)
    })
  })
})
