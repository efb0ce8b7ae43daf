import {
  closeSync,
  fdatasync,
  fdatasyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import type { MessageType } from '../../core/messages.js'
import { setUnrefTimeout } from '../../core/timers.js'
import { describeError } from '../../core/describe-error.js'
import { DiskQueueError } from './disk-queue-error.js'
import { lockDirectory } from './queue-lock.js'
import {
  ACK_BYTES,
  HEADER_BYTES,
  MAX_RECORDS,
  decodeAcks,
  decodeSegment,
  encodeAcks,
  encodeRecord,
  type StoredRecord,
} from './records.js'

/** The journal's settings, checked (see `DiskQueueOptions`). */
export interface JournalSettings {
  readonly directory: string
  readonly maxBytes: number
  readonly syncInterval: number
  readonly segmentBytes: number
}

/** A record an earlier run left unsettled, with where it is. */
export interface RecoveredRecord extends StoredRecord {
  readonly location: number
}

/** What reading the directory at start found. */
export interface Recovery {
  /** Unsettled records of earlier runs, oldest first. */
  readonly records: RecoveredRecord[]
  /** Torn or corrupt stretches skipped, and their bytes. */
  readonly corrupt: number
  readonly corruptBytes: number
  /** Segments that could not be read at all (`EACCES`, `EISDIR`...), each with why: skipped and left in place. */
  readonly unreadable: string[]
}

/** One segment: a `.log` file of records, and a `.ack` file of the indexes settled. */
interface Segment {
  readonly number: number
  /** Records written to it (the next index). */
  records: number
  /** Records not yet settled: the segment is deleted when none is left and it is not the one written to. */
  live: number
  /** Bytes of its two files. */
  bytes: number
  /** The acknowledgement file, opened at the first one. */
  ackFd: number | undefined
}

/** `number * SEGMENT_SPAN + index`: where a record is, as one number (exact below 2 ** 53). */
const SEGMENT_SPAN = MAX_RECORDS

const NAME = /^(\d{12})\.(log|ack)$/

const fileName = (number: number, kind: 'log' | 'ack') => `${String(number).padStart(12, '0')}.${kind}`

/**
 * The files of a disk queue: append-only segments of records, a file of acknowledgements beside
 * each, and the lock. Every write is a `write(2)` before the call that asked for it returns, so a
 * process killed at any moment loses nothing the call accepted: the operating system has it. An
 * `fdatasync` every `syncInterval` ms (0: after each write) bounds what a power loss can take.
 * A segment is deleted once each of its records is settled; until then its settled records are
 * listed in its `.ack` file, read at start so that only the others are sent again.
 */
export class DiskJournal {
  readonly settings: JournalSettings
  readonly #unlock: () => void
  readonly #segments = new Map<number, Segment>()
  /** The segment records are appended to, and its file. */
  #active: Segment
  #fd: number
  /** Bytes of every segment's files. */
  #bytes = 0
  /** Where each waiting message's record is, by `messageId`; a second message of one id waits in `#twins`. */
  readonly #locations = new Map<string, number>()
  readonly #twins = new Map<string, number[]>()
  /** One buffer for every record written, grown to the largest. */
  #buffer = Buffer.allocUnsafe(64 * 1024)
  /** Files written since the last sync. */
  readonly #unsynced = new Set<number>()
  /** Syncs under way on libuv's threads, and the files to close once none is (a full segment's, after its sync). */
  #syncing = 0
  readonly #retired = new Set<number>()
  #syncTimer: ReturnType<typeof setTimeout> | undefined
  #closed = false

  /**
   * Takes the directory (made if missing), reads what earlier runs left, and starts a segment.
   *
   * @throws {@link DiskQueueError} `ERR_QUEUE_LOCKED`, or `ERR_QUEUE_DIRECTORY` when the files cannot
   * be made, read or written.
   */
  constructor(settings: JournalSettings, recovered: (recovery: Recovery) => void) {
    this.settings = settings
    const { directory } = settings
    try {
      mkdirSync(directory, { recursive: true })
    } catch (cause) {
      throw directoryError(directory, 'cannot be made', cause)
    }
    this.#unlock = lockDirectory(directory)
    try {
      const { recovery, last } = this.#read()
      // After every number found, deleted or not: a file that could not be deleted is never taken for the new segment's.
      const next = last + 1
      this.#active = { number: next, records: 0, live: 0, bytes: 0, ackFd: undefined }
      this.#fd = openSync(join(directory, fileName(next, 'log')), 'wx')
      this.#segments.set(next, this.#active)
      syncDirectory(directory)
      recovered(recovery)
    } catch (cause) {
      this.close()
      throw cause instanceof DiskQueueError ? cause : directoryError(directory, 'cannot be read or written', cause)
    }
  }

  /** Bytes of the queue's files. */
  get bytes(): number {
    return this.#bytes
  }

  /** Whether a record of `json` would take the files past `maxBytes`. */
  full(json: string): boolean {
    const room = this.settings.maxBytes - this.#bytes - HEADER_BYTES
    // A character is 1 to 3 bytes of UTF-8: counted only when the bound is near.
    return json.length * 3 > room && Buffer.byteLength(json) > room
  }

  /**
   * Appends the record of an accepted call, before the call returns. A write the system refuses
   * (a full disk) throws: the caller keeps the message in memory and says so.
   */
  append(type: MessageType, json: string, messageId: string): void {
    let segment = this.#active
    if (segment.bytes >= this.settings.segmentBytes || segment.records >= MAX_RECORDS) segment = this.#roll()
    // A character is at most 3 bytes of UTF-8.
    const room = HEADER_BYTES + json.length * 3
    if (this.#buffer.length < room) this.#buffer = Buffer.allocUnsafe(Math.max(room, this.#buffer.length * 2))
    const size = encodeRecord(this.#buffer, type, json, segment.records, Math.floor(Date.now() / 1000))
    writeSync(this.#fd, this.#buffer, 0, size)
    this.#wrote(this.#fd)
    segment.bytes += size
    this.#bytes += size
    this.adopt(messageId, segment.number * SEGMENT_SPAN + segment.records++)
  }

  /** A message of a record already on disk (an earlier run's) now waits in the client. */
  adopt(messageId: string, location: number): void {
    const segment = this.#segments.get(Math.floor(location / SEGMENT_SPAN)) as Segment
    segment.live++
    if (!this.#locations.has(messageId)) this.#locations.set(messageId, location)
    else {
      const twins = this.#twins.get(messageId)
      if (twins) twins.push(location)
      else this.#twins.set(messageId, [location])
    }
  }

  /**
   * Messages settled (sent, or failed for good): their records are acknowledged, and each segment
   * left with none waiting is deleted. Ids the journal does not hold are ignored.
   */
  settle(messages: readonly { readonly messageId: string }[]): void {
    const locations: number[] = []
    for (const { messageId } of messages) {
      const location = this.#locations.get(messageId)
      if (location === undefined) continue
      locations.push(location)
      const twins = this.#twins.get(messageId)
      const next = twins?.shift()
      if (next === undefined) this.#locations.delete(messageId)
      else {
        this.#locations.set(messageId, next)
        if (twins?.length === 0) this.#twins.delete(messageId)
      }
    }
    this.release(locations)
  }

  /** Acknowledges records by location (a batch's are mostly consecutive: one entry per run). */
  release(locations: readonly number[]): void {
    if (this.#closed || locations.length === 0) return
    const sorted = [...locations].sort((a, b) => a - b)
    let start = 0
    for (let at = 1; at <= sorted.length; at++) {
      const segmentOf = (index: number) => Math.floor((sorted[index] as number) / SEGMENT_SPAN)
      if (at < sorted.length && segmentOf(at) === segmentOf(start)) continue
      this.#acknowledge(segmentOf(start), sorted.slice(start, at))
      start = at
    }
  }

  /** Syncs what was written, closes the files and lets the directory go. What is unsettled stays for the next start. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    if (this.#syncTimer !== undefined) clearTimeout(this.#syncTimer)
    this.#sync(true)
    this.#closeRetired()
    for (const segment of this.#segments.values()) {
      if (segment.ackFd !== undefined) closeQuietly(segment.ackFd)
      // An empty segment has nothing for the next start.
      if (segment.live === 0 && segment === this.#active) this.#delete(segment)
    }
    if (this.#fd !== undefined) closeQuietly(this.#fd)
    this.#unlock()
  }

  #acknowledge(number: number, locations: readonly number[]): void {
    const segment = this.#segments.get(number)
    if (segment === undefined) return
    const ranges: number[] = []
    for (const location of locations) {
      const index = location - number * SEGMENT_SPAN
      if (ranges.length > 0 && ranges[ranges.length - 1] === index - 1) ranges[ranges.length - 1] = index
      else ranges.push(index, index)
    }
    segment.live -= locations.length
    if (segment.live === 0 && segment !== this.#active) {
      this.#delete(segment)
      return
    }
    segment.ackFd ??= openSync(join(this.settings.directory, fileName(number, 'ack')), 'a')
    const entries = encodeAcks(ranges)
    writeSync(segment.ackFd, entries)
    this.#wrote(segment.ackFd)
    segment.bytes += entries.length
    this.#bytes += entries.length
  }

  /** Starts the next segment; the full one is synced and closed, and deleted when nothing in it waits. */
  #roll(): Segment {
    const full = this.#active
    // Closed once the sync that its last writes wait for is done.
    this.#retired.add(this.#fd)
    const number = full.number + 1
    this.#active = { number, records: 0, live: 0, bytes: 0, ackFd: undefined }
    this.#fd = openSync(join(this.settings.directory, fileName(number, 'log')), 'wx')
    this.#segments.set(number, this.#active)
    syncDirectory(this.settings.directory)
    if (full.live === 0) this.#delete(full)
    return this.#active
  }

  #delete(segment: Segment): void {
    this.#segments.delete(segment.number)
    if (segment.ackFd !== undefined) {
      this.#unsynced.delete(segment.ackFd)
      closeQuietly(segment.ackFd)
      segment.ackFd = undefined
    }
    if (segment === this.#active) {
      this.#unsynced.delete(this.#fd)
    }
    for (const kind of ['log', 'ack'] as const) {
      try {
        unlinkSync(join(this.settings.directory, fileName(segment.number, kind)))
      } catch {}
    }
    this.#bytes -= segment.bytes
  }

  /** Marks a file written; its sync comes within `syncInterval` ms (at once with 0). */
  #wrote(fd: number): void {
    this.#unsynced.add(fd)
    if (this.settings.syncInterval === 0) this.#sync()
    else
      this.#syncTimer ??= setUnrefTimeout(() => {
        this.#syncTimer = undefined
        this.#sync()
      }, this.settings.syncInterval)
  }

  /**
   * Syncs the files written since the last sync. Off the event loop (libuv's threads), but for
   * `syncInterval: 0`, where the call waits for it, and at close.
   */
  #sync(now = this.settings.syncInterval === 0): void {
    for (const fd of this.#unsynced) {
      if (now) {
        try {
          fdatasyncSync(fd)
        } catch {}
        continue
      }
      this.#syncing++
      fdatasync(fd, () => {
        if (--this.#syncing === 0) this.#closeRetired()
      })
    }
    this.#unsynced.clear()
    if (this.#syncing === 0) this.#closeRetired()
  }

  /** Closes the full segments' files whose writes are all synced. */
  #closeRetired(): void {
    for (const fd of this.#retired) {
      if (this.#unsynced.has(fd)) continue
      closeQuietly(fd)
      this.#retired.delete(fd)
    }
  }

  /**
   * Reads every segment of earlier runs: the records not acknowledged, and how much was skipped.
   * Segments left with nothing to send are deleted; an acknowledgement file torn at its end is cut
   * back to its last whole entry, so that new entries line up.
   */
  #read(): { recovery: Recovery; last: number } {
    const { directory } = this.settings
    const numbers = new Set<number>()
    for (const name of readdirSync(directory)) {
      const match = NAME.exec(name)
      if (match) numbers.add(Number(match[1]))
    }
    const records: RecoveredRecord[] = []
    let corrupt = 0
    let corruptBytes = 0
    const unreadable: string[] = []
    for (const number of [...numbers].sort((a, b) => a - b)) {
      const ackPath = join(directory, fileName(number, 'ack'))
      let log: Buffer
      let acks: Buffer
      try {
        log = readOrEmpty(join(directory, fileName(number, 'log')))
        acks = readOrEmpty(ackPath)
      } catch (error) {
        // A file that cannot be read never stops a start: its records are skipped, and said.
        unreadable.push(`${fileName(number, 'log')}: ${describeError(error)}`)
        continue
      }
      const contents = decodeSegment(log)
      corrupt += contents.corrupt
      corruptBytes += contents.corruptBytes
      const settled = decodeAcks(acks)
      const unsettled = contents.records.filter((record) => !settled.has(record.index))
      const segment: Segment = {
        number,
        records: contents.records.length,
        live: 0,
        bytes: log.length + acks.length,
        ackFd: undefined,
      }
      this.#segments.set(number, segment)
      this.#bytes += segment.bytes
      if (unsettled.length === 0) {
        this.#delete(segment)
        continue
      }
      if (acks.length % ACK_BYTES !== 0) {
        const fd = openSync(ackPath, 'r+')
        ftruncateSync(fd, acks.length - (acks.length % ACK_BYTES))
        segment.bytes -= acks.length % ACK_BYTES
        this.#bytes -= acks.length % ACK_BYTES
        closeSync(fd)
      }
      for (const record of unsettled) records.push({ ...record, location: number * SEGMENT_SPAN + record.index })
    }
    return { recovery: { records, corrupt, corruptBytes, unreadable }, last: Math.max(0, ...numbers) }
  }
}

function readOrEmpty(path: string): Buffer {
  try {
    return readFileSync(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0)
    throw error
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd)
  } catch {}
}

/** Syncs the directory itself, so that a file just made is still listed after a power loss (where the system can). */
function syncDirectory(directory: string): void {
  let fd: number | undefined
  try {
    fd = openSync(directory, 'r')
    fdatasyncSync(fd)
  } catch {
    // Windows cannot open a directory; Deno may not allow it. The files' own syncs still hold.
  } finally {
    if (fd !== undefined) closeQuietly(fd)
  }
}

function directoryError(directory: string, what: string, cause: unknown): DiskQueueError {
  return new DiskQueueError(
    'ERR_QUEUE_DIRECTORY',
    directory,
    `The disk queue's directory ${directory} ${what}: ${(cause as Error)?.message ?? String(cause)}. Give a directory this process can write to.`,
    { cause },
  )
}
