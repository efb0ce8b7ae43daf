import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { DeliveryError, Logger, NoPlan, PlanOption } from '../../src/index.js'
import { DiskQueueError, DurableClient, type DurableClientOptions } from '../../src/client/disk-queue/index.js'
import { decodeSegment } from '../../src/client/disk-queue/records.js'
import { startSink, type Sink } from '../helpers/sink.js'

const directories: string[] = []
const clients: DurableClient[] = []
const sinks: Sink[] = []

afterEach(async () => {
  vi.useRealTimers()
  for (const client of clients.splice(0)) await client.close({ timeout: 0 })
  for (const sink of sinks.splice(0)) await sink.close()
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true })
})

function tempDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'eventwire-disk-queue-'))
  directories.push(directory)
  return directory
}

/** A logger that keeps its lines. */
function lines(): Logger & { errors: string[] } {
  const errors: string[] = []
  return { errors, log: () => undefined, error: (line) => errors.push(line) }
}

function open(directory: string, options: Partial<DurableClientOptions & PlanOption<NoPlan>> = {}): DurableClient {
  const client = new DurableClient('key', {
    endpoint: 'http://127.0.0.1:9',
    flushAt: 1,
    logger: lines(),
    ...options,
    disk: { directory, ...options.disk },
  })
  clients.push(client)
  return client
}

async function sink(status = 200): Promise<Sink> {
  const started = await startSink(() => ({ status }))
  sinks.push(started)
  return started
}

/** The records of every segment file in `directory`. */
function recordsIn(directory: string) {
  return readdirSync(directory)
    .filter((name) => name.endsWith('.log'))
    .sort()
    .flatMap((name) => decodeSegment(readFileSync(join(directory, name))).records)
}

/** Messages an endpoint that never answers 2xx leaves queued, closed with them still held: they stay on disk. */
async function leftOnDisk(
  directory: string,
  count: number,
  options: Partial<DurableClientOptions & PlanOption<NoPlan>> = {},
) {
  const down = await sink(503)
  const client = open(directory, { endpoint: down.url, retry: { limit: 1000, baseDelay: 60_000 }, ...options })
  const ids: string[] = []
  for (let index = 0; index < count; index++) {
    const messageId = `left-${index}`
    client.track({ userId: 'u1', event: 'Left', messageId })
    ids.push(messageId)
  }
  await client.close({ timeout: 0 })
  return ids
}

describe('DurableClient: a call is on disk when it returns', () => {
  it('writes the record, with its messageId and timestamp, before track() returns', () => {
    const directory = tempDirectory()
    const client = open(directory)
    client.track({ userId: 'u1', event: 'Signed Up', messageId: 'm-1' })
    const [record] = recordsIn(directory)
    expect(record?.type).toBe('track')
    expect(JSON.parse(record?.json ?? '{}')).toMatchObject({ messageId: 'm-1', event: 'Signed Up' })
    expect(JSON.parse(record?.json ?? '{}').timestamp).toMatch(/^\d{4}-/)
  })

  it('gives an empty messageId the id the client sends, so that its acknowledgement settles it', async () => {
    const directory = tempDirectory()
    const up = await sink()
    const client = open(directory, { endpoint: up.url })
    client.track({ userId: 'u1', event: 'E', messageId: '' })
    const [record] = recordsIn(directory)
    await client.flush()
    expect(up.delivered().map((message) => message['messageId'])).toEqual([JSON.parse(record?.json ?? '{}').messageId])
    await client.close()
    expect(readdirSync(directory)).toEqual([])
  })

  it('writes nothing for a call the client refuses or a middleware drops', () => {
    const directory = tempDirectory()
    const client = open(directory, { middleware: [(message) => (message.type === 'page' ? null : message)] })
    expect(() => client.track({ userId: 'u1', event: '' })).toThrow()
    client.page({ userId: 'u1', name: 'Home' })
    expect(recordsIn(directory)).toEqual([])
  })

  it('writes one record per message when a middleware calls the client itself', () => {
    const directory = tempDirectory()
    let client: DurableClient | undefined
    client = open(directory, {
      middleware: [
        (message) => {
          if (message.type === 'track') client?.identify({ userId: 'u1' })
          return message.type === 'track' && message.event === 'Drop' ? null : message
        },
      ],
    })
    client.track({ userId: 'u1', event: 'Drop' })
    client.track({ userId: 'u1', event: 'Keep' })
    expect(recordsIn(directory).map((record) => record.type)).toEqual(['identify', 'identify', 'track'])
  })
})

describe('DurableClient: at start, what the endpoint had not acknowledged is sent again', () => {
  it('sends the messages left on disk with their original messageId, and nothing acknowledged before', async () => {
    const directory = tempDirectory()
    const up = await sink()
    const first = open(directory, { endpoint: up.url })
    const sent = new Promise((resolve) => first.once('sent', resolve))
    first.track({ userId: 'u1', event: 'Acknowledged', messageId: 'acked' })
    await sent
    await first.close()
    const left = await leftOnDisk(directory, 3)
    const again = await sink()
    const second = open(directory, { endpoint: again.url })
    expect(second.recovery).toEqual({ resent: 3, dropped: 0, corrupt: 0, corruptBytes: 0 })
    await second.flush()
    expect(again.delivered().map((message) => message['messageId'])).toEqual(left)
  })

  it('deletes a segment once every message in it is settled, and leaves the directory empty at close', async () => {
    const directory = tempDirectory()
    const up = await sink()
    const client = open(directory, { endpoint: up.url, disk: { directory, segmentBytes: 4096 } })
    for (let index = 0; index < 200; index++) client.track({ userId: 'u1', event: 'E', properties: { index } })
    await client.flush()
    expect(readdirSync(directory).filter((name) => name.endsWith('.log')).length).toBe(1)
    await client.close()
    expect(readdirSync(directory)).toEqual([])
  })

  it('lets go of a message that failed for good (ERR_REJECTED): it is not sent again', async () => {
    const directory = tempDirectory()
    const refusing = await sink(400)
    const first = open(directory, { endpoint: refusing.url })
    first.on('error', () => undefined)
    first.track({ userId: 'u1', event: 'Refused' })
    await first.flush()
    await first.close()
    const second = open(directory)
    expect(second.recovery.resent).toBe(0)
  })

  it('settles both messages of one messageId', async () => {
    const directory = tempDirectory()
    const up = await sink()
    const client = open(directory, { endpoint: up.url, flushAt: 2 })
    client.track({ userId: 'u1', event: 'A', messageId: 'twin' })
    client.track({ userId: 'u1', event: 'B', messageId: 'twin' })
    await client.flush()
    await client.close()
    expect(readdirSync(directory)).toEqual([])
  })
})

describe('DurableClient: a torn or corrupt record never blocks a start', () => {
  it('skips flipped bytes and a torn end, counts and logs them, and sends every record around them', async () => {
    const directory = tempDirectory()
    const left = await leftOnDisk(directory, 5)
    const [log] = readdirSync(directory).filter((name) => name.endsWith('.log'))
    const path = join(directory, log as string)
    const bytes = readFileSync(path)
    const records = recordsIn(directory)
    expect(records.length).toBe(5)
    // The second record's JSON gets a flipped byte; the last record loses its end.
    const second = bytes.indexOf('left-1')
    bytes[second] = (bytes[second] as number) ^ 0xff
    writeFileSync(path, bytes.subarray(0, bytes.length - 3))
    const logger = lines()
    const again = await sink()
    const client = open(directory, { endpoint: again.url, logger })
    expect(client.recovery).toMatchObject({ resent: 3, corrupt: 2 })
    expect(logger.errors.join('\n')).toMatch(/skipped 2 torn or corrupt/)
    await client.flush()
    expect(again.delivered().map((message) => message['messageId'])).toEqual([left[0], left[2], left[3]])
  })

  it('starts when a segment cannot be read at all, and says which', () => {
    const directory = tempDirectory()
    mkdirSync(join(directory, '000000000003.log'))
    const logger = lines()
    const client = open(directory, { logger })
    expect(client.recovery.resent).toBe(0)
    expect(logger.errors).toEqual([
      expect.stringMatching(/could not read 1 segment file\(s\) at start.*000000000003\.log: .*EISDIR/),
    ])
    client.track({ userId: 'u1', event: 'After' })
    expect(readdirSync(directory)).toContain('000000000004.log')
  })

  it('starts on a file of garbage', async () => {
    const directory = tempDirectory()
    writeFileSync(join(directory, '000000000007.log'), Buffer.alloc(1000, 0x45))
    writeFileSync(join(directory, '000000000007.ack'), Buffer.alloc(13, 1))
    const client = open(directory, { logger: lines() })
    expect(client.recovery).toMatchObject({ resent: 0, corrupt: 1, corruptBytes: 1000 })
    expect(readdirSync(directory).filter((name) => name.startsWith('000000000007'))).toEqual([])
  })
})

describe('DurableClient: caps by bytes and by age, reported as a full queue', () => {
  it('drops calls past disk.maxBytes with ERR_QUEUE_FULL, to the callback and the error event', async () => {
    const directory = tempDirectory()
    const down = await sink(503)
    const client = open(directory, {
      endpoint: down.url,
      retry: { limit: 1000, baseDelay: 60_000 },
      disk: { directory, maxBytes: 1024 * 1024 },
    })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    const big = 'x'.repeat(30_000)
    const outcomes: Array<string | undefined> = []
    for (let index = 0; index < 40; index++) {
      client.track({ userId: 'u1', event: 'Big', properties: { big } }, (error) => outcomes.push(error?.code))
    }
    await Promise.resolve()
    expect(client.diskBytes).toBeLessThanOrEqual(1024 * 1024)
    expect(errors.map((error) => error.code)).toEqual(['ERR_QUEUE_FULL'])
    expect(errors[0]?.message).toMatch(/disk\.maxBytes/)
    expect(errors[0]?.messages.length).toBe(40 - Math.floor((1024 * 1024) / 30_100))
    expect(outcomes.every((code) => code === 'ERR_QUEUE_FULL')).toBe(true)
  })

  it('drops at start what is older than disk.maxAge, reported with ERR_QUEUE_FULL', async () => {
    const directory = tempDirectory()
    await leftOnDisk(directory, 2)
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 2 * 24 * 3600 * 1000 })
    const client = open(directory, { disk: { directory, maxAge: 24 * 3600 * 1000 } })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    await Promise.resolve()
    expect(client.recovery).toMatchObject({ resent: 0, dropped: 2 })
    expect(errors.map((error) => [error.code, error.messages.length])).toEqual([['ERR_QUEUE_FULL', 2]])
    expect(errors[0]?.message).toMatch(/disk\.maxAge/)
  })
})

describe('DurableClient: when the disk fails', () => {
  it('keeps sending from memory when a write fails, and says so once', async () => {
    const directory = tempDirectory()
    const up = await sink()
    const logger = lines()
    const client = open(directory, { endpoint: up.url, logger, flushAt: 20, disk: { directory, segmentBytes: 4096 } })
    rmSync(directory, { recursive: true, force: true })
    const accepted = Array.from({ length: 100 }, (_, index) =>
      client.track({ userId: 'u1', event: 'E', properties: { index } }),
    )
    expect(accepted.every(Boolean)).toBe(true)
    await client.flush()
    expect(up.delivered().length).toBe(100)
    expect(logger.errors).toEqual([
      expect.stringMatching(/could not write a message; it is queued in memory only: .*ENOENT/),
    ])
  })

  it('refuses a call after close() with ClosedError, even at the disk cap', async () => {
    const directory = tempDirectory()
    const client = open(directory, { disk: { directory, maxBytes: 1024 * 1024 } })
    const big = 'x'.repeat(30_000)
    for (let index = 0; index < 40; index++)
      client.track({ userId: 'u1', event: 'Big', properties: { big } }, () => undefined)
    const closing = client.close({ timeout: 0 })
    expect(() => client.track({ userId: 'u1', event: 'Big', properties: { big } })).toThrow(
      expect.objectContaining({ code: 'ERR_CLOSED' }),
    )
    await closing
  })
})

describe('DurableClient: what a start reads back', () => {
  it('sends what it read back at once, without waiting for flushAt or flushAfter', async () => {
    const directory = tempDirectory()
    const left = await leftOnDisk(directory, 2)
    const again = await sink()
    const client = open(directory, { endpoint: again.url, flushAt: 1000, flushAfter: 600_000 })
    await new Promise((resolve) => client.once('sent', resolve))
    expect(again.delivered().map((message) => message['messageId'])).toEqual(left)
  })

  it("drops a kept call the client's checks now refuse, reported with its wire JSON", async () => {
    const directory = tempDirectory()
    const left = await leftOnDisk(directory, 3)
    const logger = lines()
    const client = open(directory, {
      logger,
      middleware: [
        (message) => {
          if (message.messageId === left[1]) throw new Error('no longer')
          return message
        },
      ],
    })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    await Promise.resolve()
    expect(client.recovery).toMatchObject({ resent: 2, dropped: 1 })
    expect(errors.map((error) => [error.code, error.messages.map((message) => message.messageId)])).toEqual([
      ['ERR_QUEUE_FULL', [left[1]]],
    ])
    expect(JSON.parse(errors[0]?.messages[0]?.json ?? '{}')).toMatchObject({ type: 'track', messageId: left[1] })
    expect(errors[0]?.message).toMatch(/refused by the client's checks/)
  })

  it('logs a drop nobody hears, and not one every callback hears', async () => {
    const directory = tempDirectory()
    const logger = lines()
    const client = open(directory, { logger, disk: { directory, maxBytes: 1024 * 1024 } })
    const big = 'x'.repeat(30_000)
    for (let index = 0; index < 40; index++)
      client.track({ userId: 'u1', event: 'Big', properties: { big } }, () => undefined)
    await Promise.resolve()
    expect(logger.errors).toEqual([])
    client.track({ userId: 'u1', event: 'Big', properties: { big } })
    await Promise.resolve()
    expect(logger.errors).toEqual([expect.stringMatching(/^ERR_QUEUE_FULL: Dropped 1 message\(s\): the disk queue/)])
  })
})

describe('DurableClient: one directory, one client', () => {
  it('refuses a second client of the directory with ERR_QUEUE_LOCKED, and takes it once the first closed', async () => {
    const directory = tempDirectory()
    const first = open(directory)
    const refused = (() => {
      try {
        open(directory)
      } catch (error) {
        return error
      }
    })()
    expect(refused).toBeInstanceOf(DiskQueueError)
    expect(refused).toMatchObject({ code: 'ERR_QUEUE_LOCKED', directory })
    expect((refused as Error).message).toMatch(/another client of this process/)
    await first.close()
    expect(() => open(directory)).not.toThrow()
  })

  it('takes over a lock whose process is gone, and one with our own process id that this process does not hold', () => {
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' })
    const directory = tempDirectory()
    writeFileSync(join(directory, 'lock'), gone.stdout)
    expect(() => open(directory)).not.toThrow()
    const other = tempDirectory()
    writeFileSync(join(other, 'lock'), `${process.pid}\n`)
    expect(() => open(other)).not.toThrow()
  })

  it('takes over a lock file that names no process: garbage, or 0', () => {
    for (const content of ['garbage', '0\n', '-3\n', '']) {
      const directory = tempDirectory()
      writeFileSync(join(directory, 'lock'), content)
      expect(() => open(directory)).not.toThrow()
      expect(readFileSync(join(directory, 'lock'), 'utf8')).toBe(`${process.pid}\n`)
    }
  })

  it('refuses a directory a running process holds, naming it', () => {
    const directory = tempDirectory()
    writeFileSync(join(directory, 'lock'), `${process.ppid}\n`)
    expect(() => open(directory)).toThrow(expect.objectContaining({ code: 'ERR_QUEUE_LOCKED' }))
    expect(() => open(directory)).toThrow(`process ${process.ppid}`)
  })

  it('says when the directory cannot be used: ERR_QUEUE_DIRECTORY with the cause', () => {
    const file = join(tempDirectory(), 'a-file')
    writeFileSync(file, '')
    expect(() => open(file)).toThrow(expect.objectContaining({ code: 'ERR_QUEUE_DIRECTORY', directory: file }))
  })
})

describe('DurableClient: options', () => {
  it('takes each bound at its least', () => {
    const directory = tempDirectory()
    expect(() =>
      open(directory, { disk: { directory, maxBytes: 1024 * 1024, segmentBytes: 4096, syncInterval: 0, maxAge: 1 } }),
    ).not.toThrow()
  })

  it.each([
    [{}, 'disk'],
    [{ disk: 'dir' }, 'disk'],
    [{ disk: {} }, 'disk.directory'],
    [{ disk: { directory: '/tmp/x', size: 1 } }, 'disk.size'],
    [{ disk: { directory: '/tmp/x', maxBytes: 10 } }, 'disk.maxBytes'],
    [{ disk: { directory: '/tmp/x', syncInterval: -1 } }, 'disk.syncInterval'],
    [{ disk: { directory: '/tmp/x', maxAge: 0 } }, 'disk.maxAge'],
    [{ disk: { directory: '/tmp/x', segmentBytes: 10 } }, 'disk.segmentBytes'],
    [{ disk: { directory: '/tmp/x', maxBytes: 1024 * 1024 - 1 } }, 'disk.maxBytes'],
    [{ disk: { directory: '/tmp/x', segmentBytes: 4095 } }, 'disk.segmentBytes'],
    [{ disk: { directory: '/tmp/x', syncInterval: 2 ** 31 } }, 'disk.syncInterval'],
    [{ disk: { directory: '' } }, 'disk.directory'],
    [{ disk: { directory: 7 } }, 'disk.directory'],
  ])('%j: refused, naming %s', (options, option) => {
    expect(() => new DurableClient('key', options as DurableClientOptions)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION', option }),
    )
  })
})
