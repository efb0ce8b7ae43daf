import { expect, it } from 'vitest'
import { constantTimeEqual } from '../../src/webhook/signing/signature.js'

/** A string that counts how many of its characters are read (through `charCodeAt`). */
function counted(text: string): { value: string; reads(): number } {
  let reads = 0
  const value = {
    length: text.length,
    charCodeAt(index: number) {
      reads++
      return text.charCodeAt(index)
    },
  }
  return { value: value as unknown as string, reads: () => reads }
}

// The time a comparison takes follows from the characters it reads: reading all of them, whatever
// the position of the first difference, is what leaves a forger nothing to time. Counting reads
// proves it without a clock, so the test cannot fail for a loaded machine.
it('reads every character whether the strings differ at the first, the middle or the last one', () => {
  const secret = 'a'.repeat(40)
  for (const other of [`b${'a'.repeat(39)}`, `${'a'.repeat(20)}b${'a'.repeat(19)}`, `${'a'.repeat(39)}b`, secret]) {
    const expected = counted(secret)
    const actual = counted(other)
    expect(constantTimeEqual(expected.value, actual.value)).toBe(other === secret)
    expect([expected.reads(), actual.reads()]).toEqual([40, 40])
  }
})

it('answers false for strings of different lengths (the length of a signature is public)', () => {
  expect(constantTimeEqual('abc', 'abcd')).toBe(false)
})
