// The retry heap against a sorted list, under any mix of adds, shifts and removals: what it hands
// out is always the earliest, and a removed item never comes back.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MemoryRetryStore } from '../../src/webhook/retry-store.js'

interface Item {
  readonly id: number
  readonly dueAt: number
  slot?: number | undefined
}

const operation = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), dueAt: fc.integer({ min: 0, max: 50 }) }),
  fc.record({ kind: fc.constant('shift' as const) }),
  fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
)

describe('MemoryRetryStore', () => {
  it('shifts the earliest item, whatever was added and removed before', () => {
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 200 }), (operations) => {
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
        const rest = store.takeAll()
        expect(rest.map((item) => item.id).sort((a, b) => a - b)).toEqual(
          held.map((item) => item.id).sort((a, b) => a - b),
        )
        expect(store.size).toBe(0)
      }),
    )
  })
})
