// The registry of sources, in the queue's Redis: write keys kept as digests and unique across
// sources, destinations that must exist, versions that guard concurrent writers, and the view of
// every source that an ingest process finds write keys in, fresh within a second.
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { OptionsError } from '../../src/index.js'
import { REGISTRY_FRESH_MS } from '../../src/webhook/bullmq/registry-watch.js'
import { writeKeyDigest } from '../../src/webhook/bullmq/source-record.js'
import { SourceConflictError, WebhookQueue, WebhookSources } from '../../src/webhook/bullmq/index.js'
import { redisForFile } from '../helpers/redis-suite.js'

const redis = redisForFile()
const open: WebhookQueue[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((queue) => queue.close()))
})

let queues = 0

describe('a source, checked', () => {
  it('keeps its write keys as SHA-256 digests: the same key, the same digest, in every process', () => {
    expect(writeKeyDigest('abc')).toBe('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(writeKeyDigest('wk_1')).not.toBe(writeKeyDigest('wk_2'))
  })

  it('refuses what set() cannot store, naming the field', () => {
    const refusal = (source: unknown) => {
      try {
        WebhookSources.check(source as never)
      } catch (error) {
        expect(error).toBeInstanceOf(OptionsError)
        return (error as Error).message
      }
      throw new Error('accepted')
    }
    expect(refusal(null)).toMatch(/^Invalid option `source`: expected an object/)
    expect(refusal({ id: 'shop', destinations: [] })).toMatch(/`source.writeKey`: a source needs a write key/)
    const digest = writeKeyDigest('k')
    for (const bad of ['sha256:00', `x${digest}`, `${digest}0`, 7, digest.toUpperCase()])
      expect(refusal({ id: 'shop', writeKeyDigests: [bad], destinations: [] }), String(bad)).toBe(
        'Invalid option `source.writeKeyDigests[0]`: expected "sha256:" and 64 hex digits, as a stored source lists them. Give a new key as writeKey.',
      )
    expect(refusal({ id: 'shop', writeKeyDigests: digest, destinations: [] })).toBe(
      'Invalid option `source.writeKeyDigests`: expected a list of digests, as a stored source lists them.',
    )
    const six = ['a', 'b', 'c', 'd', 'e'].map(writeKeyDigest)
    expect(refusal({ id: 'shop', writeKey: 'f', writeKeyDigests: six, destinations: [] })).toBe(
      'Invalid option `source.writeKey`: a source has at most 5 write keys, with writeKeyDigests; drop the old ones.',
    )
    // A key given both ways counts once.
    expect(() =>
      WebhookSources.check({ id: 'shop', writeKey: 'a', writeKeyDigests: six, destinations: [] }),
    ).not.toThrow()
    expect(refusal({ id: 'shop', writeKey: 'k', destinations: ['a b'] })).toMatch(
      /`source.destinations\[0\]`: not the id of a destination/,
    )
    expect(refusal({ id: 'shop', writeKeys: 'k', destinations: [] })).toMatch(/use `writeKey` instead/)
  })
})

describe.runIf(redis.available)('the registry of sources', () => {
  const connection = () => ({ host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null })
  async function queue(name = `sources-${queues++}`): Promise<WebhookQueue> {
    const made = new WebhookQueue({ connection: connection(), name })
    open.push(made)
    await made.ready()
    await made.destinations.set({ id: 'acme', webhooks: [{ url: 'https://hooks.acme.example/in' }] })
    await made.destinations.set({ id: 'beta', webhooks: [{ url: 'https://hooks.beta.example/in' }] })
    return made
  }

  it('sets, reads, lists and deletes sources; keys are stored as digests, never as given', async () => {
    const platform = await queue()
    const shop = await platform.sources.set({ id: 'shop', writeKey: ['wk_old', 'wk_new'], destinations: ['acme'] })
    expect(shop).toMatchObject({
      id: 'shop',
      writeKeyDigests: [writeKeyDigest('wk_old'), writeKeyDigest('wk_new')],
      destinations: ['acme'],
    })
    expect(shop.version).toBeGreaterThan(0)
    expect(await platform.sources.get('shop')).toEqual(shop)
    await platform.sources.set({ id: 'blog', writeKey: 'wk_blog', destinations: [], rateLimit: 5 })
    const { sources, unreadable } = await platform.sources.list()
    expect(sources.map((source) => [source.id, source.rateLimit])).toEqual([
      ['blog', 5],
      ['shop', undefined],
    ])
    expect(unreadable).toEqual([])
    // Listed by id, whatever order Redis keeps them in.
    for (const id of ['zeta', 'alpha', 'mid'])
      await platform.sources.set({ id, writeKey: `wk_${id}`, destinations: [] })
    expect((await platform.sources.list()).sources.map((source) => source.id)).toEqual([
      'alpha',
      'blog',
      'mid',
      'shop',
      'zeta',
    ])
    // An id no source can have is refused, named as the argument it is.
    for (const call of [() => platform.sources.get('a b'), () => platform.sources.delete('a b')])
      await expect(call()).rejects.toThrow(/^Invalid option `source`: expected 1 to 100 letters/)
    expect(await platform.sources.delete('shop')).toBe(true)
    expect(await platform.sources.delete('shop')).toBe(false)
    expect(await platform.sources.get('shop')).toBeUndefined()
    // Known as deleted, so that a seed file leaves it deleted, until it is set again.
    expect(await platform.sources.wasDeleted('shop')).toBe(true)
    expect(await platform.sources.wasDeleted('blog')).toBe(false)
    expect(await platform.sources.wasDeleted('never')).toBe(false)
    await expect(platform.sources.wasDeleted('a b')).rejects.toThrow(/^Invalid option `source`/)
    await platform.sources.set({ id: 'shop', writeKey: 'wk_shop', destinations: [] })
    expect(await platform.sources.wasDeleted('shop')).toBe(false)
  })

  it('gives each write key to one source: another source with it is refused, and nothing is written', async () => {
    const platform = await queue()
    await platform.sources.set({ id: 'shop', writeKey: ['wk_1', 'wk_2'], destinations: ['acme'] })
    await expect(platform.sources.set({ id: 'blog', writeKey: ['wk_3', 'wk_2'], destinations: [] })).rejects.toThrow(
      'Invalid option `source.writeKey`: source "shop" has this write key already: give each source its own.',
    )
    expect(await platform.sources.get('blog')).toBeUndefined()
    // A source may keep its own keys, and drop one: another source can take it then.
    await platform.sources.set({ id: 'shop', writeKey: 'wk_1', destinations: ['acme'] })
    await platform.sources.set({ id: 'blog', writeKey: ['wk_3', 'wk_2'], destinations: [] })
    // A deleted source's keys are free again.
    await platform.sources.delete('blog')
    await platform.sources.set({ id: 'news', writeKey: 'wk_3', destinations: [] })
    expect((await platform.sources.find('wk_3'))?.id).toBe('news')
  })

  it('refuses a destination the registry does not hold', async () => {
    const platform = await queue()
    await expect(
      platform.sources.set({ id: 'shop', writeKey: 'wk_1', destinations: ['acme', 'ghost'] }),
    ).rejects.toThrow(
      'Invalid option `source.destinations[1]`: no destination "ghost" in the registry: set it first (destinations.set(), or eventwire destinations set).',
    )
    expect(await platform.sources.get('shop')).toBeUndefined()
  })

  it('writes over the version read, or not at all', async () => {
    const platform = await queue()
    const first = await platform.sources.set({ id: 'shop', writeKey: 'wk_1', destinations: ['acme'] })
    const kept = { id: 'shop', writeKeyDigests: first.writeKeyDigests, destinations: ['acme', 'beta'] }
    const second = await platform.sources.set(kept, { ifVersion: first.version })
    expect(second.writeKeyDigests).toEqual([writeKeyDigest('wk_1')])
    const stale = platform.sources.set(kept, { ifVersion: first.version })
    await expect(stale).rejects.toBeInstanceOf(SourceConflictError)
    await expect(stale).rejects.toMatchObject({ code: 'ERR_SOURCE_CONFLICT', version: second.version })
    await expect(platform.sources.set(kept, { ifVersion: 0 })).rejects.toThrow(/exists already/)
  })

  it('finds a source by any of its keys in another process, and sees a change within a second', async () => {
    const name = `sources-${queues++}`
    const writer = await queue(name)
    const ingest = new WebhookQueue({ connection: connection(), name })
    open.push(ingest)
    await writer.sources.set({ id: 'shop', writeKey: ['wk_1', 'wk_2'], destinations: ['acme'] })
    expect((await ingest.sources.find('wk_1'))?.id).toBe('shop')
    expect((await ingest.sources.find('wk_2'))?.destinations).toEqual(['acme'])
    expect(await ingest.sources.find('wk_3')).toBeUndefined()
    expect(await ingest.sources.find('')).toBeUndefined()
    // Once read, a lookup needs no Redis: it answers at once, not with a promise.
    expect(ingest.sources.find('wk_1')).not.toBeInstanceOf(Promise)

    const changed = Date.now()
    await writer.sources.set({ id: 'shop', writeKey: 'wk_2', destinations: ['beta'] })
    await writer.sources.set({ id: 'blog', writeKey: 'wk_1', destinations: [] })
    while ((await ingest.sources.find('wk_1'))?.id !== 'blog') await sleep(20)
    expect((await ingest.sources.find('wk_2'))?.destinations).toEqual(['beta'])
    await writer.sources.delete('shop')
    while ((await ingest.sources.find('wk_2')) !== undefined) await sleep(20)
    // Both changes seen within the bound (and some slack for a loaded machine).
    expect(Date.now() - changed).toBeLessThan(2 * REGISTRY_FRESH_MS + 1_000)
  })

  it('leaves out a stored source that does not read as one, and says so', async () => {
    const name = `sources-${queues++}`
    const platform = await queue(name)
    const warnings: string[] = []
    platform.on('warning', (message) => warnings.push(String(message)))
    await platform.sources.set({ id: 'shop', writeKey: 'wk_1', destinations: ['acme'] })
    const raw = new Redis({ host: '127.0.0.1', port: redis.server.port })
    try {
      await raw.hset(`bull:${name}:sources`, 'bad', '{"id":"bad","version":1,"updatedAt":1,"destinations":"x"}')
      await raw.incr(`bull:${name}:sources:version`)
    } finally {
      raw.disconnect()
    }
    expect((await platform.sources.find('wk_1'))?.id).toBe('shop')
    expect(warnings.join('\n')).toMatch(/source "bad" in Redis cannot be read, and its write keys are refused/)
    const { unreadable } = await platform.sources.list()
    expect(unreadable.map((entry) => entry.id)).toEqual(['bad'])
    await expect(platform.sources.get('bad')).rejects.toThrow(
      'Invalid option `source`: source "bad" in Redis cannot be read: Invalid option `sources.bad.writeKey`: a source needs a write key: the key its clients send with each call. Set it again with set().',
    )
  })

  it('frees the keys of a source Redis holds as garbage, and lets set() repair it', async () => {
    const name = `sources-${queues++}`
    const platform = await queue(name)
    await platform.sources.set({ id: 'drift', writeKey: 'wk_drift', destinations: [] })
    const raw = new Redis({ host: '127.0.0.1', port: redis.server.port })
    try {
      await raw.hset(`bull:${name}:sources`, 'drift', '{"id":"drift", oops')
    } finally {
      raw.disconnect()
    }
    await expect(platform.sources.get('drift')).rejects.toThrow(
      'source "drift" in Redis cannot be read: its JSON does not parse. Set it again with set().',
    )
    // Its record no longer lists the key: another source may take it.
    await platform.sources.set({ id: 'other', writeKey: 'wk_drift', destinations: [] })
    // Written over without ifVersion: repaired.
    await platform.sources.set({ id: 'drift', writeKey: 'wk_new', destinations: [] })
    expect((await platform.sources.get('drift'))?.writeKeyDigests).toEqual([writeKeyDigest('wk_new')])
    // A deleted source's index entries hold nothing either.
    await platform.sources.delete('other')
    await platform.sources.set({ id: 'third', writeKey: 'wk_drift', destinations: [] })
    await platform.close()
    expect(() => platform.sources.find('wk_new')).toThrow(expect.objectContaining({ code: 'ERR_CLOSED' }))
    expect(() => platform.sources.find('wk_new')).toThrow(/find sources/)
  })
})
