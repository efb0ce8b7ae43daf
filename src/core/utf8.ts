// biome-ignore lint/suspicious/noControlCharactersInRegex: the range starts at U+0000 on purpose.
const NON_ASCII = /[^\u0000-\u007f]/

/**
 * UTF-8 byte length of a string, without encoding it. Lone surrogates count as the 3 bytes of
 * U+FFFD, which is what `TextEncoder` and `fetch` write for them.
 */
export function utf8ByteLength(text: string): number {
  if (!NON_ASCII.test(text)) return text.length
  let bytes = text.length
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 0x80) continue
    if (code < 0x800) {
      bytes += 1
    } else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1))) {
      // Two UTF-16 units, already counted as 2, make one 4-byte sequence.
      bytes += 2
      index++
    } else {
      bytes += 2
    }
  }
  return bytes
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}
