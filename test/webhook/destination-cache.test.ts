// One process's view of the registry of destinations: read once, read again once the registry
// says it changed, never used when older than REGISTRY_FRESH_MS, bounded in size.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  DestinationCache,
  MAX_CACHED_DESTINATIONS,
  readStored,
  type ReadDestination,
} from '../../src/webhook/bullmq/destination-cache.js'
import { REGISTRY_FRESH_MS, REGISTRY_POLL_MS } from '../../src/webhook/bullmq/registry-watch.js'
import type { Changes, Registry, RegistryStore } from '../../src/webhook/bullmq/registry.js'

/** A registry in memory: what `read` and `changesSince` answer, and how often they were asked. */
class FakeRegistry {
  readonly json = new Map<string, string>()
  version = 0
  changed: string[] = []
  reads = 0
  looks = 0
  fail: Error | undefined
  /** Runs while a read is under way, before it answers. */
  duringRead: (() => Promise<void>) | undefined

  set(id: string, url: string, enabled = true): void {
    this.version++
    this.json.set(
      id,
      JSON.stringify({ id, webhooks: [{ url }], mode: 'any', enabled, version: this.version, updatedAt: 1 }),
    )
    this.changed.push(id)
  }

  async read(_store: RegistryStore, id: string): Promise<string | null> {
    this.reads++
    const answer = this.json.get(id) ?? null
    await this.duringRead?.()
    return answer
  }

  async changesSince(_store: RegistryStore, seen: number): Promise<Changes> {
    this.looks++
    if (this.fail) throw this.fail
    const ids = this.changed
    this.changed = []
    return { version: this.version, ids, forgetAll: this.version < seen }
  }
}

let now = 0
let registry: FakeRegistry
let failures: Error[]
let cache: DestinationCache<ReadDestination>
beforeEach(() => {
  vi.useFakeTimers()
  now = 10_000
  registry = new FakeRegistry()
  failures = []
  cache = new DestinationCache({
    registry: registry as unknown as Registry,
    store: async () => ({}) as RegistryStore,
    build: (read) => read,
    failed: (error) => failures.push(error),
    now: () => now,
  })
})
afterEach(() => {
  cache.close()
  vi.useRealTimers()
})

const urlOf = (read: ReadDestination) => (read.kind === 'found' ? read.resolved.webhooks[0]?.url : read.kind)

describe('DestinationCache', () => {
  it('looks at the changes before its first read, then reads each destination once', async () => {
    registry.set('a', 'https://a.example/')
    expect(urlOf(await cache.get('a'))).toBe('https://a.example/')
    expect(registry.looks).toBe(1)
    expect(urlOf(await cache.get('a'))).toBe('https://a.example/')
    expect(urlOf(await cache.get('nobody'))).toBe('absent')
    expect(registry.reads).toBe(2)
    expect(registry.looks).toBe(1)
  })

  it('reads a destination again once a look finds it changed, and only that one', async () => {
    registry.set('a', 'https://a.example/')
    registry.set('b', 'https://b.example/')
    await cache.get('a')
    await cache.get('b')
    registry.set('a', 'https://a2.example/')
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    expect(registry.looks).toBe(2)
    expect(urlOf(await cache.get('a'))).toBe('https://a2.example/')
    expect(urlOf(await cache.get('b'))).toBe('https://b.example/')
    expect(registry.reads).toBe(3)
  })

  it(`never uses a view older than ${REGISTRY_FRESH_MS} ms: past it, get() waits for a look first`, async () => {
    registry.set('a', 'https://a.example/')
    await cache.get('a')
    registry.set('a', 'https://a2.example/')
    // No timer ran (a worker's event loop busy): at the bound the view is still used...
    now += REGISTRY_FRESH_MS
    expect(urlOf(await cache.get('a'))).toBe('https://a.example/')
    // ...and a millisecond past it, not.
    now += 1
    expect(urlOf(await cache.get('a'))).toBe('https://a2.example/')
    expect(registry.looks).toBe(2)
  })

  it('counts a view from when its look began, not when it answered', async () => {
    registry.set('a', 'https://a.example/')
    await cache.get('a')
    now += REGISTRY_FRESH_MS + 1
    const look = registry.changesSince.bind(registry)
    registry.changesSince = async (store, seen) => {
      const changes = await look(store, seen)
      now += 500
      return changes
    }
    await cache.get('a')
    // Began 500 ms ago: fresh for another 500 ms, not 1,000.
    now += REGISTRY_FRESH_MS - 500 + 1
    const looks = registry.looks
    await cache.get('a')
    expect(registry.looks).toBe(looks + 1)
  })

  it('does not keep a read that a look overtook: the change it may have missed is read again', async () => {
    registry.set('a', 'https://a.example/')
    await cache.get('a')
    registry.set('b', 'https://b.example/')
    registry.duringRead = async () => {
      registry.duringRead = undefined
      registry.set('b', 'https://b2.example/')
      now += REGISTRY_FRESH_MS + 1
      await cache.get('a')
    }
    expect(urlOf(await cache.get('b'))).toBe('https://b.example/')
    expect(urlOf(await cache.get('b'))).toBe('https://b2.example/')
  })

  it('forgets all it holds when the registry went back (emptied, or restored from an older copy)', async () => {
    registry.set('a', 'https://a.example/')
    registry.set('b', 'https://b.example/')
    await cache.get('a')
    registry.version = 0
    registry.json.set(
      'a',
      JSON.stringify({
        id: 'a',
        webhooks: [{ url: 'https://old.example/' }],
        mode: 'any',
        enabled: true,
        version: 1,
        updatedAt: 1,
      }),
    )
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    expect(urlOf(await cache.get('a'))).toBe('https://old.example/')
  })

  it('reread() reads the registry now, whatever the view holds', async () => {
    registry.set('a', 'https://a.example/', false)
    await cache.get('a')
    registry.set('a', 'https://a.example/', true)
    const read = await cache.reread('a')
    expect(read.kind === 'found' && read.resolved.enabled).toBe(true)
    expect(registry.looks).toBe(1)
  })

  it('forget() drops one destination, for the process that changed it', async () => {
    registry.set('a', 'https://a.example/')
    await cache.get('a')
    registry.json.set('a', registry.json.get('a')?.replace('a.example', 'a3.example') ?? '')
    cache.forget('a')
    expect(urlOf(await cache.get('a'))).toBe('https://a3.example/')
  })

  it(`keeps at most ${MAX_CACHED_DESTINATIONS} destinations, dropping the one read longest ago`, async () => {
    for (let i = 0; i <= MAX_CACHED_DESTINATIONS; i++) await cache.get(`d${i}`)
    const reads = registry.reads
    await cache.get(`d${MAX_CACHED_DESTINATIONS}`)
    await cache.get('d1')
    expect(registry.reads).toBe(reads)
    await cache.get('d0')
    expect(registry.reads).toBe(reads + 1)
  })

  it('tells a failing look once until one succeeds, and goes on looking', async () => {
    registry.set('a', 'https://a.example/')
    await cache.get('a')
    registry.fail = new Error('connection lost')
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS * 3)
    expect(registry.looks).toBe(4)
    expect(failures.map((error) => error.message)).toEqual(['connection lost'])
    registry.fail = undefined
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    registry.fail = new Error('lost again')
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    expect(failures.map((error) => error.message)).toEqual(['connection lost', 'lost again'])
    // A get() on a view gone stale meanwhile waits for a look, and fails with it.
    now += REGISTRY_FRESH_MS + 1
    await expect(cache.get('a')).rejects.toThrow('lost again')
  })

  it('reads a destination once for every get() that asks before the read answers', async () => {
    registry.set('a', 'https://a.example/')
    const [first, second] = await Promise.all([cache.get('a'), cache.get('a')])
    expect(first).toBe(second)
    expect(registry.reads).toBe(1)
  })

  it('tells the very first failing look', async () => {
    registry.fail = new Error('no Redis yet')
    await expect(cache.get('a')).rejects.toThrow('no Redis yet')
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS * 2)
    expect(failures.map((error) => error.message)).toEqual(['no Redis yet'])
  })

  it('stops looking once closed, also after a look that was under way', async () => {
    registry.set('a', 'https://a.example/')
    await cache.get('a')
    let answer = () => {}
    let asked = () => {}
    const underWay = new Promise<void>((resolve) => {
      asked = resolve
    })
    const look = registry.changesSince.bind(registry)
    // The next look waits to be answered; any after it answers at once.
    registry.changesSince = async (store, seen) => {
      registry.changesSince = look
      const answered = new Promise<void>((resolve) => {
        answer = resolve
      })
      asked()
      await answered
      return look(store, seen)
    }
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS)
    await underWay
    cache.close()
    answer()
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS * 4)
    expect(registry.looks).toBe(2)
  })

  it('stops looking once closed', async () => {
    await cache.get('a')
    cache.close()
    await vi.advanceTimersByTimeAsync(REGISTRY_POLL_MS * 4)
    expect(registry.looks).toBe(1)
  })
})

describe('readStored', () => {
  const stored = (fields: Record<string, unknown>) =>
    JSON.stringify({
      id: 'a',
      webhooks: [{ url: 'https://a.example/' }],
      mode: 'any',
      enabled: true,
      version: 3,
      updatedAt: 7,
      ...fields,
    })

  it('tells JSON that does not parse without quoting it: a stored destination holds secrets', () => {
    const read = readStored('a', '{"id":"a","sharedSecret":"s3cret-value" oops}')
    expect(read).toEqual({ kind: 'unreadable', problem: 'its JSON does not parse' })
  })

  it('reads a destination the registry wrote, with its version and time', () => {
    expect(readStored('a', stored({}))).toMatchObject({
      kind: 'found',
      stored: { id: 'a', version: 3, updatedAt: 7, enabled: true, mode: 'any' },
      resolved: { id: 'a', enabled: true, mode: 'any' },
    })
  })

  it.each([
    ['not JSON', '{"id":', /does not parse/],
    ['not an object', '[1]', /not a JSON object/],
    ['null', 'null', /not a JSON object/],
    ['a number', '42', /not a JSON object/],
    [
      'without a version',
      JSON.stringify({ id: 'a', webhooks: [{ url: 'https://a.example/' }], updatedAt: 1 }),
      /no version/,
    ],
    [
      'without a time',
      JSON.stringify({ id: 'a', webhooks: [{ url: 'https://a.example/' }], version: 1 }),
      /no version/,
    ],
    ['under another id', stored({ id: 'b' }), /its id is "b"/],
    [
      'with six URLs',
      stored({ webhooks: Array.from({ length: 6 }, () => ({ url: 'https://a.example/' })) }),
      /destinations\.a\.webhooks.*1 to 5/,
    ],
    [
      'with a header that splits the request',
      stored({ webhooks: [{ url: 'https://a.example/', headers: { 'X-A': 'a\r\nb' } }] }),
      /control characters/,
    ],
  ])('calls one %s unreadable, with why', (_, json, problem) => {
    const read = readStored('a', json)
    expect(read.kind).toBe('unreadable')
    expect(read.kind === 'unreadable' && read.problem).toMatch(problem)
  })

  it('calls nothing absent', () => {
    expect(readStored('a', null)).toEqual({ kind: 'absent' })
  })
})
