import { describe, expect, it } from 'vitest'
import { utf8ByteLength } from '../src/core/utf8.js'

describe('utf8ByteLength', () => {
  const encoder = new TextEncoder()
  it.each([
    ['empty', ''],
    ['ASCII', '{"event":"Signed Up"}'],
    ['2-byte', 'café ü ß'],
    ['3-byte', '€ 東京 ☕'],
    ['4-byte pairs', '😀👍🏽𝄞'],
    ['a lone high surrogate', 'a\ud800b'],
    ['a lone low surrogate', 'a\udc00b'],
    ['a high surrogate at the end', 'abc\ud83d'],
    ['a reversed pair', '\udc00\ud800'],
  ])('matches TextEncoder for %s', (_name, text) => {
    expect(utf8ByteLength(text)).toBe(encoder.encode(text).length)
  })

  it('matches TextEncoder on random strings across the whole UTF-16 range', () => {
    for (let round = 0; round < 500; round++) {
      const units = Array.from({ length: 40 }, () => Math.floor(Math.random() * 0x10000))
      const text = String.fromCharCode(...units)
      expect(utf8ByteLength(text)).toBe(encoder.encode(text).length)
    }
  })
})
