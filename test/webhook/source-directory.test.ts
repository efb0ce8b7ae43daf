// Every source held by one process and found by write key: read whole at the first look, then
// only what changed; never used on a view older than REGISTRY_FRESH_MS; a key moved from one
// source to another follows it; a source that does not read as one is left out and told.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Changes, Registry, RegistryStore } from '../../src/webhook/bullmq/registry.js'
import { REGISTRY_FRESH_MS, REGISTRY_POLL_MS } from '../../src/webhook/bullmq/registry-watch.js'
import { SourceDirectory } from '../../src/webhook/bullmq/source-directory.js'
import { writeKeyDigest } from '../../src/webhook/bullmq/source-record.js'

/** A registry of sources in memory: what it answers, and what it was asked. */
class FakeRegistry {
  readonly json = new Map<string, string>()
  version = 0
  changed: string[] = []
  forgetAll = false
  looks = 0
  readAlls = 0
  readManys: string[][] = []
  fail: Error | undefined

  set(id: string, keys: string[], destinations: string[] = []): void {
    this.version++
    const writeKeyDigests = keys.map(writeKeyDigest)
    this.json.set(id, JSON.stringify({ id, writeKeyDigests, destinations, version: this.version, updatedAt: 1 }))
    this.changed.push(id)
  }

  raw(id: string, json: string): void {
    this.version++
    this.json.set(id, json)
    this.changed.push(id)
  }

  delete(id: string): void {
    this.version++
    this.json.delete(id)
    this.changed.push(id)
  }

  async changesSince(_store: RegistryStore, seen: number): Promise<Changes> {
    this.looks++
    if (this.fail) throw this.fail
    const ids = this.changed
    this.changed = []
    return { version: this.version, ids, forgetAll: this.forgetAll || this.version < seen }
  }

  async readAll(): Promise<Array<[string, string]>> {
    this.readAlls++
    return [...this.json]
  }

  async readMany(_store: RegistryStore, ids: readonly string[]): Promise<Array<string | null>> {
    this.readManys.push([...ids])
    return ids.map((id) => this.json.get(id) ?? null)
  }
}

let now = 0
let registry: FakeRegistry
let failures: Error[]
let unreadable: Array<[string, string]>
let directory: SourceDirectory
beforeEach(() => {
  vi.useFakeTimers()
  now = 10_000
  registry = new FakeRegistry()
  failures = []
  unreadable = []
  directory = new SourceDirectory({
    registry: registry as unknown as Registry,
    store: async () => ({}) as RegistryStore,
    failed: (error) => failures.push(error),
    unreadable: (id, problem) => unreadable.push([id, problem]),
    now: () => now,
  })
})
afterEach(() => {
  directory.close()
  vi.useRealTimers()
})

const idOf = async (key: string) => (await directory.find(key))?.id

describe('SourceDirectory', () => {
  it('reads every source at its first look, then finds each by any of its keys without Redis', async () => {
    registry.set('shop', ['wk_1', 'wk_2'], ['acme'])
    registry.set('blog', ['wk_3'])
    expect(await idOf('wk_1')).toBe('shop')
    expect([registry.looks, registry.readAlls]).toEqual([1, 1])
    // Fresh: answered at once, not as a promise, and nothing asked of Redis.
    expect((directory.find('wk_2') as { id: string }).id).toBe('shop')
    expect(directory.find('wk_3')).toMatchObject({ id: 'blog' })
    expect(directory.find('wk_4')).toBeUndefined()
    expect(directory.find('')).toBeUndefined()
    expect(directory.size).toBe(2)
    expect([registry.looks, registry.readAlls, registry.readManys.length]).toEqual([1, 1, 0])
  })

  it(`reads only what changed, every ${REGISTRY_POLL_MS} ms`, async () => {
    registry.set('shop', ['wk_1'])
    await directory.find('wk_1')
    registry.set('shop', ['wk_2'])
    registry.set('blog', ['wk_1'])
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    expect(registry.readManys).toEqual([['shop', 'blog']])
    expect(registry.readAlls).toBe(1)
    // The key moved from shop to blog: found there, and shop's old key is shop's no more.
    expect(await idOf('wk_1')).toBe('blog')
    expect(await idOf('wk_2')).toBe('shop')
    registry.delete('shop')
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    expect(await idOf('wk_2')).toBeUndefined()
    expect(await idOf('wk_1')).toBe('blog')
    expect(directory.size).toBe(1)
  })

  it('keeps a key moved to a source read earlier in the same look', async () => {
    registry.set('shop', ['wk_1'])
    await directory.find('wk_1')
    // blog takes wk_1 first, then shop is rewritten without it: blog's is not dropped with shop's.
    registry.set('blog', ['wk_1'])
    registry.set('shop', ['wk_9'])
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    expect(await idOf('wk_1')).toBe('blog')
    expect(await idOf('wk_9')).toBe('shop')
  })

  it('reads everything again when it cannot catch up id by id', async () => {
    registry.set('shop', ['wk_1'])
    await directory.find('wk_1')
    registry.json.clear()
    registry.set('blog', ['wk_2'])
    registry.forgetAll = true
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    expect(registry.readAlls).toBe(2)
    expect(await idOf('wk_1')).toBeUndefined()
    expect(await idOf('wk_2')).toBe('blog')
  })

  it(`never answers on a view older than ${REGISTRY_FRESH_MS} ms: past it, find() waits for a look`, async () => {
    registry.set('shop', ['wk_1'])
    await directory.find('wk_1')
    directory.close()
    registry.delete('shop')
    now += REGISTRY_FRESH_MS
    expect(directory.find('wk_1')).toMatchObject({ id: 'shop' })
    now += 1
    const found = directory.find('wk_1')
    expect(found).toBeInstanceOf(Promise)
    expect(await found).toBeUndefined()
  })

  it('stops looking once closed', async () => {
    registry.set('shop', ['wk_1'])
    await directory.find('wk_1')
    directory.close()
    const looks = registry.looks
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS * 4)
    expect(registry.looks).toBe(looks)
  })

  it('looks at once after expire(): the process that wrote never reads its own change late', async () => {
    registry.set('shop', ['wk_1'])
    await directory.find('wk_1')
    registry.delete('shop')
    directory.expire()
    expect(await idOf('wk_1')).toBeUndefined()
  })

  it('tells a failed look once until one succeeds, and rejects a find that needed it', async () => {
    registry.fail = new Error('Redis is down')
    await expect(directory.find('wk_1')).rejects.toThrow('Redis is down')
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS * 3)
    expect(failures.map((error) => error.message)).toEqual(['Redis is down'])
    registry.fail = undefined
    registry.set('shop', ['wk_1'])
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    expect(await idOf('wk_1')).toBe('shop')
    registry.fail = new Error('down again')
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    expect(failures.map((error) => error.message)).toEqual(['Redis is down', 'down again'])
  })

  it('leaves out a stored source that does not read as one, and tells why, each time it is read', async () => {
    registry.set('shop', ['wk_1'])
    registry.raw('bad', '{"id":"bad"')
    registry.raw('odd', JSON.stringify({ id: 'odd', writeKeyDigests: [writeKeyDigest('wk_2')], destinations: [] }))
    registry.raw(
      'typed',
      JSON.stringify({
        id: 'typed',
        writeKeyDigests: [writeKeyDigest('wk_t')],
        destinations: 'x',
        version: 1,
        updatedAt: 1,
      }),
    )
    registry.raw(
      'other',
      JSON.stringify({
        id: 'else',
        writeKeyDigests: [writeKeyDigest('wk_3')],
        destinations: [],
        version: 1,
        updatedAt: 1,
      }),
    )
    expect(await idOf('wk_1')).toBe('shop')
    expect(await idOf('wk_2')).toBeUndefined()
    expect(await idOf('wk_3')).toBeUndefined()
    expect(unreadable.map(([id]) => id)).toEqual(['bad', 'odd', 'typed', 'other'])
    expect(unreadable).toEqual([
      ['bad', 'its JSON does not parse'],
      ['odd', 'it has no version (it was not written by eventwire)'],
      [
        'typed',
        'Invalid option `sources.typed.destinations`: expected a list of up to 100 destination ids, such as ["acme"] ([] to take calls and send them nowhere).',
      ],
      ['other', 'its id is "else"'],
    ])
    // A source that stops reading as one is dropped, with its keys.
    registry.raw('shop', '[]')
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    expect(await idOf('wk_1')).toBeUndefined()
    expect(unreadable.at(-1)).toEqual(['shop', 'it is not a JSON object'])
  })
})
