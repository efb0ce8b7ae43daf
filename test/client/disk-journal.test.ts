import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { DiskJournal, type JournalSettings, type Recovery } from '../../src/client/disk-queue/disk-journal.js'
import { ACK_BYTES, HEADER_BYTES } from '../../src/client/disk-queue/records.js'

const directories: string[] = []
const open: DiskJournal[] = []

afterEach(() => {
  for (const journal of open.splice(0)) journal.close()
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true })
})

function tempDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'eventwire-journal-'))
  directories.push(directory)
  return directory
}

function start(
  directory: string,
  settings: Partial<JournalSettings> = {},
): { journal: DiskJournal; recovery: Recovery } {
  let recovery: Recovery = { records: [], corrupt: 0, corruptBytes: 0, unreadable: [] }
  const journal = new DiskJournal(
    { directory, maxBytes: 1 << 30, syncInterval: 1_000, segmentBytes: 1 << 20, ...settings },
    (found) => {
      recovery = found
    },
  )
  open.push(journal)
  return { journal, recovery }
}

/** Closes a journal the test opened itself. */
function stop(journal: DiskJournal): void {
  open.splice(open.indexOf(journal), 1)
  journal.close()
}

const json = (id: string) => JSON.stringify({ messageId: id, event: 'E', padding: 'x'.repeat(150) })
const ids = (recovery: Recovery) => recovery.records.map((record) => JSON.parse(record.json).messageId as string)
/** Bytes of the segment files, the lock left out. */
const filesBytes = (directory: string) =>
  readdirSync(directory)
    .filter((name) => name !== 'lock')
    .reduce((sum, name) => sum + statSync(join(directory, name)).size, 0)

describe('DiskJournal', () => {
  it('gives back, at the next start, exactly the records not settled, in order, and counts its bytes as the files hold them', () => {
    const directory = tempDirectory()
    const { journal } = start(directory)
    for (const id of ['a', 'b', 'c', 'd']) journal.append('track', json(id), id)
    journal.settle([{ messageId: 'b' }, { messageId: 'unknown' }])
    expect(journal.bytes).toBe(filesBytes(directory))
    expect(journal.bytes).toBe(4 * (HEADER_BYTES + json('a').length) + ACK_BYTES)
    stop(journal)
    const again = start(directory)
    expect(ids(again.recovery)).toEqual(['a', 'c', 'd'])
    expect(again.recovery.records.map((record) => record.type)).toEqual(['track', 'track', 'track'])
    expect(again.journal.bytes).toBe(filesBytes(directory))
  })

  it('starts a new segment past segmentBytes, and deletes each one whose records are all settled', () => {
    const directory = tempDirectory()
    const { journal } = start(directory, { segmentBytes: 4096 })
    const all = Array.from({ length: 60 }, (_, index) => `m${index}`)
    for (const id of all) journal.append('identify', json(id), id)
    const logs = () => readdirSync(directory).filter((name) => name.endsWith('.log'))
    // A segment takes records until it holds segmentBytes or more.
    expect(logs().length).toBe(Math.ceil(60 / Math.ceil(4096 / (HEADER_BYTES + json('m0').length))))
    journal.settle(all.slice(0, 40).map((messageId) => ({ messageId })))
    expect(journal.bytes).toBe(filesBytes(directory))
    expect(logs().length).toBeLessThan(4)
    journal.settle(all.slice(40).map((messageId) => ({ messageId })))
    // The segment being written stays, empty of work, until the journal closes.
    expect(logs().length).toBe(1)
    stop(journal)
    expect(readdirSync(directory)).toEqual([])
  })

  it('keeps reading an acknowledgement file torn at its end, and lines up what it adds after', () => {
    const directory = tempDirectory()
    const { journal } = start(directory)
    for (const id of ['a', 'b', 'c', 'd', 'e']) journal.append('track', json(id), id)
    journal.settle([{ messageId: 'a' }])
    stop(journal)
    const [ack] = readdirSync(directory).filter((name) => name.endsWith('.ack'))
    appendFileSync(join(directory, ack as string), Buffer.from([1, 2, 3, 4, 5]))
    const second = start(directory)
    expect(ids(second.recovery)).toEqual(['b', 'c', 'd', 'e'])
    expect(statSync(join(directory, ack as string)).size).toBe(ACK_BYTES)
    expect(second.journal.bytes).toBe(filesBytes(directory))
    const [b] = second.recovery.records
    for (const record of second.recovery.records) second.journal.adopt('', record.location)
    second.journal.release([b?.location as number])
    expect(second.journal.bytes).toBe(filesBytes(directory))
    second.journal.release(second.recovery.records.slice(1).map((record) => record.location))
    // Every record of the old segment settled: deleted, and its bytes with it.
    expect(readdirSync(directory).filter((name) => name.startsWith('000000000001'))).toEqual([])
    expect(second.journal.bytes).toBe(filesBytes(directory))
    stop(second.journal)
    expect(ids(start(directory).recovery)).toEqual([])
  })

  it('writes one acknowledgement per run of consecutive records, in whatever order they settle', () => {
    const directory = tempDirectory()
    const { journal } = start(directory)
    const all = ['a', 'b', 'c', 'd', 'e', 'f', 'g']
    for (const id of all) journal.append('track', json(id), id)
    journal.settle(['e', 'c', 'b', 'd', 'g'].map((messageId) => ({ messageId })))
    const ack = join(directory, '000000000001.ack')
    // b to e, then g: two entries.
    expect(statSync(ack).size).toBe(2 * ACK_BYTES)
    stop(journal)
    expect(ids(start(directory).recovery)).toEqual(['a', 'f'])
  })

  it('settles records of several segments given out of order, each in its own file', () => {
    const directory = tempDirectory()
    const { journal } = start(directory, { segmentBytes: 4096 })
    const all = Array.from({ length: 50 }, (_, index) => `m${index}`)
    for (const id of all) journal.append('track', json(id), id)
    const settled = all.filter((_, index) => index % 3 === 0).reverse()
    journal.settle(settled.map((messageId) => ({ messageId })))
    expect(journal.bytes).toBe(filesBytes(directory))
    stop(journal)
    expect(ids(start(directory).recovery)).toEqual(all.filter((_, index) => index % 3 !== 0))
  })

  it('numbers segments one after the other, and deletes at the roll a full one already settled', () => {
    const directory = tempDirectory()
    const { journal } = start(directory, { segmentBytes: 4096 })
    const size = HEADER_BYTES + json('a0').length
    const perSegment = Math.ceil(4096 / size)
    const first = Array.from({ length: perSegment }, (_, index) => `a${index}`)
    for (const id of first) journal.append('track', json(id), id)
    journal.settle(first.map((messageId) => ({ messageId })))
    // Full, settled, but still the one written to: it stays until the next record starts another.
    expect(readdirSync(directory).sort()).toEqual(['000000000001.ack', '000000000001.log', 'lock'])
    journal.append('track', json('b0'), 'b0')
    expect(readdirSync(directory).sort()).toEqual(['000000000002.log', 'lock'])
    expect(journal.bytes).toBe(size)
  })

  it('starts a segment once the one written to holds exactly segmentBytes, not before', () => {
    const directory = tempDirectory()
    const record = HEADER_BYTES + json('a').length
    const { journal } = start(directory, { segmentBytes: 2 * record })
    journal.append('track', json('a'), 'a')
    journal.append('track', json('b'), 'b')
    expect(readdirSync(directory).filter((name) => name.endsWith('.log'))).toEqual(['000000000001.log'])
    journal.append('track', json('c'), 'c')
    expect(
      readdirSync(directory)
        .filter((name) => name.endsWith('.log'))
        .sort(),
    ).toEqual(['000000000001.log', '000000000002.log'])
  })

  it('grows its buffer for a record larger than any before', () => {
    const directory = tempDirectory()
    const { journal } = start(directory)
    const large = JSON.stringify({ messageId: 'large', padding: 'é'.repeat(40_000) })
    journal.append('track', json('small'), 'small')
    journal.append('track', large, 'large')
    journal.append('track', json('after'), 'after')
    stop(journal)
    expect(start(directory).recovery.records.map((record) => record.json)).toEqual([
      json('small'),
      large,
      json('after'),
    ])
  })

  it('ignores what is settled after close', () => {
    const directory = tempDirectory()
    const { journal } = start(directory)
    journal.append('track', json('a'), 'a')
    stop(journal)
    journal.settle([{ messageId: 'a' }])
    expect(ids(start(directory).recovery)).toEqual(['a'])
  })

  it('settles two waiting messages of one id one at a time, oldest first', () => {
    const directory = tempDirectory()
    const { journal } = start(directory)
    journal.append('track', json('twin-1'), 'twin')
    journal.append('track', json('twin-2'), 'twin')
    journal.append('track', json('twin-3'), 'twin')
    journal.settle([{ messageId: 'twin' }])
    stop(journal)
    expect(ids(start(directory).recovery)).toEqual(['twin-2', 'twin-3'])
  })

  it('settles twins in one batch, and forgets the id once all are settled', () => {
    const directory = tempDirectory()
    const { journal } = start(directory)
    journal.append('track', json('twin-1'), 'twin')
    journal.append('track', json('twin-2'), 'twin')
    journal.settle([{ messageId: 'twin' }, { messageId: 'twin' }, { messageId: 'twin' }])
    journal.append('track', json('twin-3'), 'twin')
    stop(journal)
    expect(ids(start(directory).recovery)).toEqual(['twin-3'])
  })

  it('is full when a record of that JSON, counted in UTF-8 bytes, would pass maxBytes', () => {
    const directory = tempDirectory()
    const { journal } = start(directory, { maxBytes: 1000 })
    journal.append('track', 'x'.repeat(480), 'one')
    const room = 1000 - journal.bytes - HEADER_BYTES
    expect(journal.full('x'.repeat(room))).toBe(false)
    expect(journal.full('x'.repeat(room + 1))).toBe(true)
    expect(journal.full('é'.repeat(room / 2))).toBe(false)
    expect(journal.full(`${'é'.repeat(room / 2)}x`)).toBe(true)
  })

  it('deletes at start what has nothing left to send: settled segments and acknowledgement files without their segment', () => {
    const directory = tempDirectory()
    const { journal } = start(directory)
    journal.append('track', json('a'), 'a')
    journal.append('track', json('b'), 'b')
    journal.settle([{ messageId: 'a' }])
    stop(journal)
    writeFileSync(join(directory, '000000000041.ack'), Buffer.alloc(ACK_BYTES))
    const second = start(directory)
    expect(readdirSync(directory).filter((name) => name.startsWith('000000000041'))).toEqual([])
    // The new segment is numbered after every file found.
    expect(readdirSync(directory).sort()).toEqual(['000000000001.ack', '000000000001.log', '000000000042.log', 'lock'])
    second.journal.adopt('b', second.recovery.records[0]?.location as number)
    second.journal.settle([{ messageId: 'b' }])
    expect(readdirSync(directory).sort()).toEqual(['000000000042.log', 'lock'])
    expect(second.journal.bytes).toBe(0)
  })

  it('syncs each write at once with syncInterval 0, and leaves the directory to the next journal at close', () => {
    const directory = tempDirectory()
    const { journal } = start(directory, { syncInterval: 0 })
    journal.append('page', json('a'), 'a')
    expect(readFileSync(join(directory, '000000000001.log')).length).toBe(HEADER_BYTES + json('a').length)
    stop(journal)
    expect(readdirSync(directory)).toEqual(['000000000001.log'])
    expect(() => stop(start(directory).journal)).not.toThrow()
  })
})
