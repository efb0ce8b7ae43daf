import { MAX_MESSAGE_BYTES } from '../../core/limits.js'
import { MESSAGE_TYPES, type MessageType } from '../../core/messages.js'
import { crc32 } from './crc32.js'

/**
 * A record of a segment file: a 20-byte header, then the call's JSON.
 *
 * | bytes | what |
 * | --- | --- |
 * | 0-3 | `EWQ1`, where a reader resynchronises after a torn or corrupt record |
 * | 4-7 | CRC-32 of bytes 8 to the record's end |
 * | 8-11 | bytes of JSON |
 * | 12-15 | the record's index in its segment (low 29 bits) and its call type (high 3 bits) |
 * | 16-19 | when it was written, in seconds since 1970 |
 *
 * Little-endian. The index is written, not counted, so that a record skipped on reading does not
 * shift the acknowledgements of the records after it.
 */
export const HEADER_BYTES = 20

/** `EWQ1`. */
export const MAGIC = Uint8Array.of(0x45, 0x57, 0x51, 0x31)

/** Most records in one segment: the index's 29 bits. */
export const MAX_RECORDS = 2 ** 29

/** Longest JSON a record may hold: a message's limit, with room for the fields a client fills in. */
export const MAX_RECORD_JSON = MAX_MESSAGE_BYTES * 4

/** A record as a segment's reader found it. */
export interface StoredRecord {
  readonly index: number
  readonly type: MessageType
  /** Seconds since 1970. */
  readonly time: number
  readonly json: string
}

/** What a segment file holds: its valid records, and what it skipped. */
export interface SegmentContents {
  readonly records: StoredRecord[]
  /** Stretches skipped: a torn record at the end, bytes flipped, a header that does not add up. */
  readonly corrupt: number
  /** Bytes in those stretches. */
  readonly corruptBytes: number
}

/**
 * Writes a record of `json` into `buffer` at 0 (`buffer` must have room for `HEADER_BYTES` and
 * `jsonBytes`); returns its size.
 */
export function encodeRecord(buffer: Buffer, type: MessageType, json: string, index: number, seconds: number): number {
  const length = buffer.write(json, HEADER_BYTES, 'utf8')
  const end = HEADER_BYTES + length
  buffer.set(MAGIC, 0)
  buffer.writeUInt32LE(length, 8)
  buffer.writeUInt32LE((index | (MESSAGE_TYPES.indexOf(type) << 29)) >>> 0, 12)
  buffer.writeUInt32LE(seconds >>> 0, 16)
  buffer.writeUInt32LE(crc32(buffer, 8, end), 4)
  return end
}

/**
 * The records of a segment file, in order. A stretch that is not a valid record (torn at the end
 * by a crash, bytes changed on disk) is skipped up to the next `EWQ1` whose record checks out: it
 * never stops the reading.
 */
export function decodeSegment(bytes: Buffer): SegmentContents {
  const records: StoredRecord[] = []
  let corrupt = 0
  let corruptBytes = 0
  let at = 0
  while (at < bytes.length) {
    const record = recordAt(bytes, at)
    if (record !== undefined) {
      records.push(record.record)
      at = record.end
      continue
    }
    const next = bytes.indexOf(MAGIC, at + 1)
    const resume = next === -1 ? bytes.length : next
    corrupt++
    corruptBytes += resume - at
    at = resume
  }
  return { records, corrupt, corruptBytes }
}

function recordAt(bytes: Buffer, at: number): { record: StoredRecord; end: number } | undefined {
  if (at + HEADER_BYTES > bytes.length || bytes.compare(MAGIC, 0, 4, at, at + 4) !== 0) return undefined
  const length = bytes.readUInt32LE(at + 8)
  const end = at + HEADER_BYTES + length
  if (length > MAX_RECORD_JSON || end > bytes.length) return undefined
  if (crc32(bytes, at + 8, end) !== bytes.readUInt32LE(at + 4)) return undefined
  const word = bytes.readUInt32LE(at + 12)
  const type = MESSAGE_TYPES[word >>> 29]
  if (type === undefined) return undefined
  return {
    record: {
      index: word & (MAX_RECORDS - 1),
      type,
      time: bytes.readUInt32LE(at + 16),
      json: bytes.toString('utf8', at + HEADER_BYTES, end),
    },
    end,
  }
}

/** An acknowledgement: records `first` to `last` of a segment settled. 12 bytes: the two, and their CRC-32. */
export const ACK_BYTES = 12

/** Writes acknowledgements of `ranges` (pairs of first and last index) into a new buffer. */
export function encodeAcks(ranges: readonly number[]): Buffer {
  const buffer = Buffer.allocUnsafe((ranges.length / 2) * ACK_BYTES)
  for (let pair = 0; pair < ranges.length; pair += 2) {
    const at = (pair / 2) * ACK_BYTES
    buffer.writeUInt32LE(ranges[pair] as number, at)
    buffer.writeUInt32LE(ranges[pair + 1] as number, at + 4)
    buffer.writeUInt32LE(crc32(buffer, at, at + 8), at + 8)
  }
  return buffer
}

/**
 * The indexes an acknowledgement file settles. An entry that does not check out (torn by a
 * crash, changed on disk) is skipped: its records are sent again, which at-least-once allows.
 */
export function decodeAcks(bytes: Buffer): Set<number> {
  const settled = new Set<number>()
  for (let at = 0; at + ACK_BYTES <= bytes.length; at += ACK_BYTES) {
    if (crc32(bytes, at, at + 8) !== bytes.readUInt32LE(at + 8)) continue
    const last = bytes.readUInt32LE(at + 4)
    for (let index = bytes.readUInt32LE(at); index <= last && index < MAX_RECORDS; index++) settled.add(index)
  }
  return settled
}
