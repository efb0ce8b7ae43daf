// Where a queue's keys live on a Redis Cluster: the hash tag of its prefix, and the slot of that tag.

/**
 * The hash tag Redis Cluster hashes for keys that start with `prefix`: what lies between the
 * first `{` and the first `}` after it, when that is not empty. `undefined` otherwise: each key
 * is then hashed whole, and a queue's keys land in different slots.
 */
export function hashTagOf(prefix: string): string | undefined {
  const open = prefix.indexOf('{')
  if (open === -1) return undefined
  const close = prefix.indexOf('}', open + 1)
  return close > open + 1 ? prefix.slice(open + 1, close) : undefined
}

/** CRC16-CCITT (XMODEM), the checksum Redis Cluster takes modulo 16384, one table entry per byte. */
const TABLE = (() => {
  const table = new Uint16Array(256)
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1
    table[byte] = crc & 0xffff
  }
  return table
})()

/** The cluster slot (0 to 16383) of a key whose hash tag is `tag`, as Redis computes it. */
export function slotOf(tag: string): number {
  let crc = 0
  for (const byte of new TextEncoder().encode(tag))
    crc = ((crc << 8) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number)) & 0xffff
  return crc % 16_384
}
