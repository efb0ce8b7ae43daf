// The hash that picks which of a span's hashes remembers an id. Producers compute it to look an id
// up, workers to remember it, in every version that shares a Redis: it must never change.
import { describe, expect, it } from 'vitest'
import { shardHash } from '../../src/webhook/bullmq/remembered-ids.js'

describe('shardHash', () => {
  it('is 32-bit FNV-1a, as its published test vectors give it', () => {
    expect(shardHash('')).toBe(0x811c9dc5)
    expect(shardHash('a')).toBe(0xe40c292c)
    expect(shardHash('foobar')).toBe(0xbf9cf968)
  })

  it('spreads job ids evenly over shards: no shard of 64 takes twice its share of 64,000 ids', () => {
    const counts = new Array<number>(64).fill(0)
    for (let index = 0; index < 64_000; index++) {
      const shard = shardHash(`evt-order-${index}`) % 64
      counts[shard] = (counts[shard] ?? 0) + 1
    }
    expect(Math.max(...counts)).toBeLessThan(2_000)
    expect(Math.min(...counts)).toBeGreaterThan(500)
  })
})
