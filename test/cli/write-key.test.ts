import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { writeKeyMatches } from '../../src/cli/ingest/write-key.js'

const charCodeAt = String.prototype.charCodeAt
afterEach(() => {
  String.prototype.charCodeAt = charCodeAt
})

/** How many characters the comparison reads one by one: the work a clock could see depend on the input. */
function charactersRead(writeKey: string, given: string): number {
  let reads = 0
  String.prototype.charCodeAt = function (this: string, index: number) {
    reads++
    return charCodeAt.call(this, index)
  }
  try {
    writeKeyMatches(writeKey, given)
  } finally {
    String.prototype.charCodeAt = charCodeAt
  }
  return reads
}

describe('the write-key comparison of eventwire dev and serve', () => {
  it('accepts the key and nothing else', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (key, given) => writeKeyMatches(key, given) === (key === given)))
    expect(writeKeyMatches('wk_123', 'wk_123')).toBe(true)
    expect(writeKeyMatches('wk_123', 'wk_12')).toBe(false)
    expect(writeKeyMatches('wk_123', 'wk_1234')).toBe(false)
    expect(writeKeyMatches('', '')).toBe(true)
  })

  it('does the same work whatever the given key’s length, so the key’s length does not leak', () => {
    const key = 'wk_0123456789abcdef'
    const work = ['', 'w', 'wk_0123456789abcdeX', 'wk_0123456789abcdef0', 'x'.repeat(500)].map((given) =>
      charactersRead(key, given),
    )
    expect(new Set(work).size).toBe(1)
  })
})
