/** CRC-32 (IEEE 802.3, the one of zip and gzip), by table: the same on Node, Deno and Bun. */
const TABLE = new Int32Array(256)
for (let byte = 0; byte < 256; byte++) {
  let crc = byte
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1
  TABLE[byte] = crc
}

/** The CRC-32 of `bytes[start, end)`, as an unsigned 32-bit number. */
export function crc32(bytes: Uint8Array, start: number, end: number): number {
  let crc = -1
  for (let index = start; index < end; index++)
    crc = (TABLE[(crc ^ (bytes[index] as number)) & 0xff] as number) ^ (crc >>> 8)
  return (crc ^ -1) >>> 0
}
