import { describe, expect, it } from 'vitest'
import { utf8ByteLength } from '../../src/core/utf8.js'

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

  // Each edge where the UTF-8 length of a code point changes, on both sides, alone and after ASCII
  // (a string with no character above 0x7F takes a shortcut).
  it.each([
    ['U+0000', '\u0000', 1],
    ['U+007F, the last 1-byte code point', '\u007f', 1],
    ['U+0080, the first 2-byte code point', '\u0080', 2],
    ['U+07FF, the last 2-byte code point', '\u07ff', 2],
    ['U+0800, the first 3-byte code point', '\u0800', 3],
    ['U+D7FF, the last code point below the surrogates', '\ud7ff', 3],
    ['U+E000, the first code point above the surrogates', '\ue000', 3],
    ['U+FFFF, the last 3-byte code point', '\uffff', 3],
    ['U+10000, the first 4-byte code point (D800 DC00)', '\ud800\udc00', 4],
    ['U+10FFFF, the last code point (DBFF DFFF)', '\udbff\udfff', 4],
    ['a lone D800 (U+FFFD)', '\ud800', 3],
    ['a lone DBFF (U+FFFD)', '\udbff', 3],
    ['a lone DC00 (U+FFFD)', '\udc00', 3],
    ['a lone DFFF (U+FFFD)', '\udfff', 3],
    ['DBFF before a non-surrogate', '\udbff\ue000', 6],
    ['D800 before a high surrogate', '\ud800\udbff', 6],
    ['D800 before DBFF DC00: one lone, then a pair', '\ud800\udbff\udc00', 7],
  ])('counts %s as TextEncoder does', (_name, character, bytes) => {
    for (const text of [character, `a${character}`, `${character}a`]) {
      expect(encoder.encode(text).length).toBe(bytes + text.length - character.length)
      expect(utf8ByteLength(text)).toBe(encoder.encode(text).length)
    }
  })

  it('matches TextEncoder on random strings across the whole UTF-16 range', () => {
    for (let round = 0; round < 500; round++) {
      const units = Array.from({ length: 40 }, () => Math.floor(Math.random() * 0x10000))
      const text = String.fromCharCode(...units)
      expect(utf8ByteLength(text)).toBe(encoder.encode(text).length)
    }
  })
})
