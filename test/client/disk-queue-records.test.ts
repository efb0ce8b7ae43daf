import { crc32 as zlibCrc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { crc32, tableCrc32 } from '../../src/client/disk-queue/crc32.js'
import {
  ACK_BYTES,
  HEADER_BYTES,
  MAGIC,
  decodeAcks,
  decodeSegment,
  encodeAcks,
  encodeRecord,
} from '../../src/client/disk-queue/records.js'
import type { MessageType } from '../../src/index.js'

/** A segment of records, as the journal writes them one after another. */
function segment(records: ReadonlyArray<readonly [MessageType, string, number, number]>): Buffer {
  const parts = records.map(([type, json, index, seconds]) => {
    const buffer = Buffer.alloc(HEADER_BYTES + json.length * 3)
    return buffer.subarray(0, encodeRecord(buffer, type, json, index, seconds))
  })
  return Buffer.concat(parts)
}

const RECORDS = [
  ['track', '{"event":"A","messageId":"a"}', 0, 1_800_000_000],
  ['alias', '{"userId":"é ✓ 😀","messageId":"b"}', 1, 1_800_000_001],
  ['identify', '{"messageId":"c"}', 536_870_911, 4_294_967_295],
] as const

describe('CRC-32', () => {
  it('is the IEEE CRC of zip and gzip, the same by the table and by zlib', () => {
    const check = Buffer.from('123456789')
    expect(tableCrc32(check, 0, 9)).toBe(0xcbf43926)
    expect(crc32(check, 0, 9)).toBe(0xcbf43926)
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, index) => (index * 7919) & 0xff))
    for (const [start, end] of [
      [0, 1000],
      [3, 517],
      [999, 1000],
      [10, 10],
    ] as const) {
      expect(tableCrc32(bytes, start, end)).toBe(zlibCrc32(bytes.subarray(start, end)))
      expect(crc32(bytes, start, end)).toBe(zlibCrc32(bytes.subarray(start, end)))
    }
  })
})

describe('segment records', () => {
  it('reads back what was written: type, index, time and the JSON, in order', () => {
    const bytes = segment(RECORDS)
    expect(bytes.subarray(0, 4)).toEqual(Buffer.from(MAGIC))
    expect(bytes.length).toBe(RECORDS.reduce((sum, [, json]) => sum + HEADER_BYTES + Buffer.byteLength(json), 0))
    expect(decodeSegment(bytes)).toEqual({
      records: RECORDS.map(([type, json, index, time]) => ({ type, json, index, time })),
      corrupt: 0,
      corruptBytes: 0,
    })
  })

  it('reads a record of empty JSON at the very end of the file', () => {
    const bytes = segment([RECORDS[0], ['page', '', 2, 7]])
    expect(decodeSegment(bytes).records.map((record) => [record.index, record.json])).toEqual([
      [0, RECORDS[0][1]],
      [2, ''],
    ])
  })

  it('skips a record with a flipped byte, and reads the next one', () => {
    for (const at of [2, 5, 9, 13, 17, 25]) {
      const bytes = segment(RECORDS)
      bytes[at] = (bytes[at] as number) ^ 0x10
      const read = decodeSegment(bytes)
      expect(read.records.map((record) => record.index)).toEqual([1, 536_870_911])
      expect(read.corrupt).toBe(1)
      expect(read.corruptBytes).toBe(HEADER_BYTES + Buffer.byteLength(RECORDS[0][1]))
    }
  })

  it('skips a torn end, and a record whose length runs past the file', () => {
    const bytes = segment(RECORDS)
    const torn = decodeSegment(bytes.subarray(0, bytes.length - 1))
    expect(torn.records.map((record) => record.index)).toEqual([0, 1])
    expect(torn).toMatchObject({ corrupt: 1, corruptBytes: HEADER_BYTES + Buffer.byteLength(RECORDS[2][1]) - 1 })
    const header = decodeSegment(bytes.subarray(0, HEADER_BYTES - 1))
    expect(header).toEqual({ records: [], corrupt: 1, corruptBytes: HEADER_BYTES - 1 })
    const long = segment([RECORDS[0]])
    long.writeUInt32LE(200_000, 8)
    expect(decodeSegment(long)).toMatchObject({ records: [], corrupt: 1 })
  })

  it('skips a record whose type is not one of the six, even with a matching CRC', () => {
    const bytes = segment([RECORDS[0]])
    bytes.writeUInt32LE((7 << 29) >>> 0, 12)
    bytes.writeUInt32LE(crc32(bytes, 8, bytes.length), 4)
    expect(decodeSegment(bytes)).toMatchObject({ records: [], corrupt: 1, corruptBytes: bytes.length })
  })

  it('reads garbage between records as one stretch each', () => {
    const [first, second] = [segment([RECORDS[0]]), segment([RECORDS[1]])]
    const bytes = Buffer.concat([Buffer.from('junk'), first, Buffer.from('EWQ1 more junk'), second])
    const read = decodeSegment(bytes)
    expect(read.records.map((record) => record.index)).toEqual([0, 1])
    expect(read).toMatchObject({ corrupt: 2, corruptBytes: 4 + 14 })
  })
})

describe('acknowledgements', () => {
  it('reads back the ranges written, and skips an entry torn or changed', () => {
    const bytes = encodeAcks([0, 2, 5, 5, 9, 10])
    expect(bytes.length).toBe(3 * ACK_BYTES)
    expect([...decodeAcks(bytes)].sort((a, b) => a - b)).toEqual([0, 1, 2, 5, 9, 10])
    expect([...decodeAcks(bytes.subarray(0, bytes.length - 1))].sort((a, b) => a - b)).toEqual([0, 1, 2, 5])
    const changed = Buffer.from(bytes)
    changed[ACK_BYTES] = (changed[ACK_BYTES] as number) ^ 1
    expect([...decodeAcks(changed)].sort((a, b) => a - b)).toEqual([0, 1, 2, 9, 10])
    expect(decodeAcks(Buffer.alloc(0)).size).toBe(0)
  })
})
