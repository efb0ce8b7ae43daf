import { describe, expect, it } from 'vitest'
import { checkEvent } from '../../src/webhook/event/prepare.js'
import { collectGarbage } from '../helpers/gc.js'

/** Heap bytes each kept id holds, beyond its slot in the array that keeps it. */
function heapPerId(makeId: (index: number) => string): number {
  const count = 20_000
  const kept = new Array<string>(count)
  collectGarbage()
  const before = process.memoryUsage().heapUsed
  for (let index = 0; index < count; index++) kept[index] = makeId(index)
  collectGarbage()
  const bytes = (process.memoryUsage().heapUsed - before) / count - 8
  expect(kept).toHaveLength(count)
  return bytes
}

describe('event ids, held for as long as an event waits', () => {
  // A flat 36-character id is 56 bytes; the tree V8 builds for a joined one is about 480.
  it('a generated id is one flat string', () => {
    const bytes = heapPerId((index) => checkEvent({ type: 'track', userId: `u${index}`, event: 'Paid' }).eventId)
    expect(bytes).toBeLessThan(120)
  })
})
