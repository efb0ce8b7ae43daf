// The retry heap against a sorted list, under any mix of adds, shifts and removals: what it hands
// out is always the earliest, and a removed item never comes back.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MemoryRetryStore } from '../../src/webhook/delivery/retry-store.js'

interface Item {
  readonly id: number
  readonly dueAt: number
  slot?: number | undefined
}

// Adds weigh more, or the heap would stay a few items deep and its sifting untested.
const operation = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('add' as const), dueAt: fc.integer({ min: 0, max: 1_000 }) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('shift' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }), weight: 2 },
)

describe('MemoryRetryStore', () => {
  it('shifts the earliest item, whatever was added and removed before', () => {
    fc.assert(
      fc.property(fc.array(operation, { minLength: 50, maxLength: 200 }), (operations) => {
        const store = new MemoryRetryStore<Item>()
        const held: Item[] = []
        let next = 0
        for (const step of operations) {
          if (step.kind === 'add') {
            const item = { id: next++, dueAt: step.dueAt }
            store.add(item)
            held.push(item)
          } else if (step.kind === 'shift') {
            const shifted = store.shift()
            const earliest = Math.min(...held.map((item) => item.dueAt))
            if (held.length === 0) expect(shifted).toBeUndefined()
            else {
              expect(shifted?.dueAt).toBe(earliest)
              held.splice(held.indexOf(shifted as Item), 1)
            }
          } else if (held.length > 0) {
            const [removed] = held.splice(step.pick % held.length, 1) as [Item]
            store.remove(removed)
            // Removing again, or an item the store never held, changes nothing.
            store.remove(removed)
            store.remove({ id: -1, dueAt: 0, slot: 0 })
          }
          expect(store.size).toBe(held.length)
          expect(store.peek()?.dueAt).toBe(held.length === 0 ? undefined : Math.min(...held.map((i) => i.dueAt)))
        }
        // Half drained in order (each shift the earliest left), the rest taken at once.
        for (let left = Math.ceil(held.length / 2); left > 0; left--) {
          const earliest = Math.min(...held.map((item) => item.dueAt))
          const shifted = store.shift() as Item
          expect(shifted.dueAt).toBe(earliest)
          held.splice(held.indexOf(shifted), 1)
        }
        const rest = store.takeAll()
        expect(rest.map((item) => item.id).sort((a, b) => a - b)).toEqual(
          held.map((item) => item.id).sort((a, b) => a - b),
        )
        expect(store.size).toBe(0)
      }),
      { numRuns: 300 },
    )
  })
})

describe('MemoryRetryStore.remove', () => {
  it('sifts the item that takes a removed one’s place down when it is later than the children there', () => {
    const store = new MemoryRetryStore<Item>()
    // Added in this order, the heap array is [1, 5, 2, 6, 7, 3, 4, 8, 9, 10]: 2 has children 3 and 4.
    const items = [1, 5, 2, 6, 7, 3, 4, 8, 9, 10].map((dueAt, id) => ({ id, dueAt }))
    for (const item of items) store.add(item)
    store.remove(items[2] as Item)
    const order: number[] = []
    for (let item = store.shift(); item !== undefined; item = store.shift()) order.push(item.dueAt)
    expect(order).toEqual([1, 3, 4, 5, 6, 7, 8, 9, 10])
  })
})
