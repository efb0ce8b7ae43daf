// Many destinations on one queue and one fleet of workers: the registry in Redis (what producers
// route to and workers deliver to), each destination's own URLs, headers, secrets and mode, and
// what becomes of events whose destination changes, is disabled or is deleted while they wait.
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { OptionsError } from '../../src/index.js'
import { REGISTRY_FRESH_MS } from '../../src/webhook/bullmq/registry-watch.js'
import {
  DestinationConflictError,
  UnknownDestinationError,
  WebhookQueue,
  WebhookWorker,
  type StoredDestination,
} from '../../src/webhook/bullmq/index.js'
import { verifySignature } from '../../src/webhook/index.js'
import { ended } from '../helpers/ended.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Sink } from '../helpers/sink.js'

const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

const event = (id: string) => ({ type: 'track' as const, userId: 'u1', event: 'Paid', messageId: id })
let queues = 0
/** A receiver's URL as results name it: normalized, with its path. */
const href = (sink: Sink) => new URL(sink.url).href

describe.runIf(redis.available)('many destinations on one queue', () => {
  const connection = () => ({ host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null })
  /** A queue of a name of its own, and a worker without URLs of its own on it. */
  async function fleet(settings: { backoff?: () => number } = {}) {
    const name = `destinations-${queues++}`
    const queue = new WebhookQueue({ connection: connection(), name })
    const worker = new WebhookWorker(
      { backoff: settings.backoff ?? (() => 50) },
      { connection: connection(), name, concurrency: 10 },
    )
    open.push(worker, queue)
    await Promise.all([queue.ready(), worker.ready()])
    return { queue, worker }
  }
  async function sink(respond?: Parameters<typeof startSink>[0]): Promise<Sink> {
    const started = await startSink(respond)
    open.push(started)
    return started
  }

  describe('the registry', () => {
    it('adds, reads, lists, disables, enables and deletes destinations; each write has a newer version', async () => {
      const { queue } = await fleet()
      const registry = queue.destinations
      const acme = await registry.set({
        id: 'acme',
        webhooks: [{ url: 'https://hooks.acme.example/in', headers: { 'X-Customer': 'acme' } }],
        sharedSecret: ['new', 'old'],
      })
      expect(acme).toMatchObject({ id: 'acme', mode: 'any', enabled: true, sharedSecret: ['new', 'old'] })
      expect(acme.version).toBeGreaterThan(0)
      expect(acme.updatedAt).toBeGreaterThan(Date.now() - 60_000)
      await registry.set({ id: 'beta', webhooks: [{ url: 'https://beta.example/in' }], mode: 'each' })
      expect(await registry.get('acme')).toEqual(acme)
      expect(await registry.get('nobody')).toBeUndefined()
      const { destinations, unreadable } = await registry.list()
      expect(destinations.map((destination) => destination.id)).toEqual(['acme', 'beta'])
      expect(unreadable).toEqual([])

      const disabled = (await registry.disable('acme')) as StoredDestination
      expect(disabled.enabled).toBe(false)
      expect(disabled.version).toBeGreaterThan(acme.version)
      expect(disabled.webhooks).toEqual(acme.webhooks)
      expect((await registry.enable('acme'))?.enabled).toBe(true)
      expect(await registry.disable('nobody')).toBeUndefined()
      expect(await registry.delete('beta')).toBe(true)
      expect(await registry.delete('beta')).toBe(false)
      expect((await registry.list()).destinations.map((destination) => destination.id)).toEqual(['acme'])
      // A deleted id is known as deleted (a seed file must not bring it back); a stored or unknown one is not.
      expect(await registry.wasDeleted('beta')).toBe(true)
      expect(await registry.wasDeleted('acme')).toBe(false)
      expect(await registry.wasDeleted('nobody')).toBe(false)
      await registry.set({ id: 'beta', webhooks: [{ url: 'https://beta.example/in' }] })
      expect(await registry.wasDeleted('beta')).toBe(false)
      await expect(registry.wasDeleted('a b')).rejects.toThrow(/^Invalid option `destination`/)
    })

    it('writes with ifVersion only over that version, so that two writers cannot undo each other', async () => {
      const { queue } = await fleet()
      const registry = queue.destinations
      const first = await registry.set({ id: 'acme', webhooks: [{ url: 'https://a.example/in' }] }, { ifVersion: 0 })
      await expect(
        registry.set({ id: 'acme', webhooks: [{ url: 'https://b.example/in' }] }, { ifVersion: 0 }),
      ).rejects.toBeInstanceOf(DestinationConflictError)
      const conflict = await registry
        .set({ id: 'acme', webhooks: [{ url: 'https://b.example/in' }] }, { ifVersion: first.version + 1 })
        .catch((error: unknown) => error)
      expect(conflict).toMatchObject({
        destination: 'acme',
        expected: first.version + 1,
        version: first.version,
        code: 'ERR_DESTINATION_CONFLICT',
      })
      expect((conflict as Error).message).toMatch(/someone changed it meanwhile\. Read it again/)
      await registry.set({ id: 'acme', webhooks: [{ url: 'https://b.example/in' }] }, { ifVersion: first.version })
      expect((await registry.get('acme'))?.webhooks).toEqual([{ url: 'https://b.example/in' }])
    })

    it.each([
      [
        'six URLs',
        { id: 'x', webhooks: Array.from({ length: 6 }, (_, i) => ({ url: `https://h${i}.example/` })) },
        'destination.webhooks',
        /1 to 5 entries, got 6/,
      ],
      [
        'a malformed URL',
        { id: 'x', webhooks: [{ url: 'hooks.example.com/in' }] },
        'destination.webhooks[0].url',
        /full http/,
      ],
      [
        'a Standard Webhooks secret of the wrong form',
        { id: 'x', webhooks: [{ url: 'https://h.example/' }], standardSecret: 'abc' },
        'destination.standardSecret',
        /whsec_/,
      ],
      [
        'an empty shared secret',
        { id: 'x', webhooks: [{ url: 'https://h.example/' }], sharedSecret: '' },
        'destination.sharedSecret',
        /non-empty/,
      ],
      [
        'an id with a slash',
        { id: 'a/b', webhooks: [{ url: 'https://h.example/' }] },
        'destination.id',
        /letters, digits/,
      ],
      ['another name for a field', { id: 'x', urls: ['https://h.example/'] }, 'destination.urls', /use `webhooks`/],
      [
        'a header eventwire sets',
        { id: 'x', webhooks: [{ url: 'https://h.example/', headers: { 'X-Signature': 'x' } }] },
        'destination.webhooks[0].headers',
        /set by eventwire/,
      ],
    ])('refuses %s at once, naming the field, and writes nothing', async (_, destination, option, message) => {
      const { queue } = await fleet()
      await queue.destinations.set({ id: 'x', webhooks: [{ url: 'https://kept.example/' }] })
      const error = await queue.destinations.set(destination as never).catch((thrown: unknown) => thrown)
      expect(error).toBeInstanceOf(OptionsError)
      expect(error).toMatchObject({ option })
      expect((error as Error).message).toMatch(message)
      expect((await queue.destinations.get('x'))?.webhooks).toEqual([{ url: 'https://kept.example/' }])
    })

    it('lists a destination that something else wrote and eventwire cannot read apart, and the queue refuses to route to it', async () => {
      const { queue } = await fleet()
      await queue.destinations.set({ id: 'fine', webhooks: [{ url: 'https://fine.example/' }] })
      const name = `destinations-${queues - 1}`
      await redis.raw.hset(`bull:${name}:destinations`, 'broken', '{"id":"broken","webhooks":[]')
      await redis.raw.zadd(`bull:${name}:destinations:changes`, 10_000, 'broken')
      await redis.raw.set(`bull:${name}:destinations:version`, 10_000)
      const { destinations, unreadable } = await queue.destinations.list()
      expect(destinations.map((destination) => destination.id)).toEqual(['fine'])
      expect(unreadable).toEqual([{ id: 'broken', problem: expect.stringMatching(/does not parse/) }])
      await expect(queue.destinations.get('broken')).rejects.toThrow(/cannot be read: its JSON does not parse/)
      const refused = await queue.enqueue(event('e1'), { destination: 'broken' }).catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(UnknownDestinationError)
      expect((refused as Error).message).toMatch(/cannot be read/)
    })
  })

  describe('routing', () => {
    it('refuses at enqueue an event id with a "." for a destination that signs with Standard Webhooks, and only for one', async () => {
      const { queue } = await fleet()
      await queue.destinations.set({
        id: 'std',
        webhooks: [{ url: 'https://std.example/in' }],
        standardSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      })
      await queue.destinations.set({ id: 'plain', webhooks: [{ url: 'https://plain.example/in' }], sharedSecret: 's' })
      const dotted = 'order.1042'
      await expect(queue.enqueue(event(dotted), { destination: 'std' })).rejects.toThrow(
        'enqueue(): the event id "order.1042" contains a ".", which Standard Webhooks does not allow in webhook-id',
      )
      const bulk = queue.enqueueBulk([event('ok-1'), event(dotted)], { destination: 'std' })
      await expect(bulk).rejects.toMatchObject({ code: 'ERR_INVALID_FIELD', field: 'messageId', index: 1 })
      await expect(bulk).rejects.toThrow(/Nothing was stored/)
      // Nothing stored: the event refused with it is still new.
      expect(await queue.enqueue(event('ok-1'), { destination: 'std' })).toMatchObject({ status: 'queued' })
      // An event its integrations turn off is not refused: it is not sent at all.
      expect(
        await queue.enqueueBulk([{ ...event(dotted), integrations: { Webhooks: false } }], { destination: 'std' }),
      ).toEqual([{ eventId: dotted, status: 'skipped' }])
      expect(await queue.enqueue(event(dotted), { destination: 'plain' })).toMatchObject({ status: 'queued' })
    })

    it("sends each destination's events to its own URLs, with its own headers and secret; the same event id to two destinations is two events", async () => {
      const { queue, worker } = await fleet()
      const [a, b1, b2] = await Promise.all([sink(), sink(), sink()])
      await queue.destinations.set({
        id: 'a',
        webhooks: [{ url: a.url, headers: { 'X-Customer': 'a' } }],
        sharedSecret: 'secret-a',
      })
      await queue.destinations.set({
        id: 'b',
        webhooks: [{ url: b1.url }, { url: b2.url }],
        mode: 'each',
        sharedSecret: 'secret-b',
      })
      const done = ended(worker, 3)
      expect(await queue.enqueue(event('same'), { destination: 'a' })).toEqual({ eventId: 'same', status: 'queued' })
      expect(await queue.enqueue(event('same'), { destination: 'b' })).toEqual({ eventId: 'same', status: 'queued' })
      expect(await queue.enqueue(event('same'), { destination: 'a' })).toEqual({ eventId: 'same', status: 'duplicate' })
      expect(await queue.enqueue(event('only-a'), { destination: 'a' })).toMatchObject({ status: 'queued' })
      const results = await done
      expect(results.map((result) => result.status)).toEqual(['delivered', 'delivered', 'delivered'])

      expect(a.requests.map((request) => request.headers['webhook-id']).sort()).toEqual(['only-a', 'same'])
      for (const request of a.requests) {
        expect(request.headers['x-customer']).toBe('a')
        expect(await verifySignature(request.body, request.headers['x-signature'], 'secret-a')).toBe(true)
      }
      for (const receiver of [b1, b2]) {
        expect(receiver.requests).toHaveLength(1)
        const [request] = receiver.requests
        expect(request?.headers['x-customer']).toBeUndefined()
        expect(await verifySignature(request?.body ?? '', request?.headers['x-signature'], 'secret-b')).toBe(true)
      }
    })

    it('refuses an unknown destination at once and stores nothing; answers disabled for a disabled one', async () => {
      const { queue } = await fleet()
      await queue.destinations.set({ id: 'off', webhooks: [{ url: 'https://off.example/' }], enabled: false })
      const refused = await queue.enqueue(event('e1'), { destination: 'nobody' }).catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(UnknownDestinationError)
      expect(refused).toMatchObject({ code: 'ERR_UNKNOWN_DESTINATION', destination: 'nobody' })
      expect((refused as Error).message).toMatch(/destinations\.set\(\)/)
      await expect(queue.enqueueBulk([event('e2')], { destination: 'nobody' })).rejects.toBeInstanceOf(
        UnknownDestinationError,
      )
      await expect(queue.enqueue(event('e3'), { destination: 'no/such' })).rejects.toMatchObject({
        code: 'ERR_INVALID_OPTION',
        option: 'destination',
      })
      // A misspelt option would send the event to no destination: refused, naming the right one.
      const misspelt = { dest: 'off' } as unknown as { destination: string }
      await expect(queue.enqueue(event('e3'), misspelt)).rejects.toThrow(/`dest`.*`destination`/)
      await expect(queue.enqueueBulk([event('e3')], misspelt)).rejects.toThrow(/`dest`/)
      await expect(queue.redrive('e3', misspelt)).rejects.toThrow(/`dest`/)
      expect(await queue.enqueue(event('e4'), { destination: 'off' })).toEqual({ eventId: 'e4', status: 'disabled' })
      expect(
        await queue.enqueueBulk([event('e5'), { ...event('e6'), integrations: { Webhooks: false } }], {
          destination: 'off',
        }),
      ).toEqual([
        { eventId: 'e5', status: 'disabled' },
        { eventId: 'e6', status: 'skipped' },
      ])
      const counts = await queue.counts()
      expect(counts.waiting + counts.delayed + counts.active + counts.failed).toBe(0)
    })

    it('a change reaches the workers without a restart: a URL moved, a secret rotated', async () => {
      const { queue, worker } = await fleet()
      const [before, after] = await Promise.all([sink(), sink()])
      await queue.destinations.set({ id: 'a', webhooks: [{ url: before.url }], sharedSecret: 'old' })
      let done = ended(worker, 1)
      await queue.enqueue(event('e1'), { destination: 'a' })
      await done
      await queue.destinations.set({ id: 'a', webhooks: [{ url: after.url }], sharedSecret: ['new', 'old'] })
      // The bound every process keeps to: a change this old is seen everywhere.
      await sleep(REGISTRY_FRESH_MS)
      done = ended(worker, 1)
      await queue.enqueue(event('e2'), { destination: 'a' })
      await done
      expect(before.requests.map((request) => request.headers['webhook-id'])).toEqual(['e1'])
      expect(after.requests.map((request) => request.headers['webhook-id'])).toEqual(['e2'])
      const [request] = after.requests
      const [first, second] = String(request?.headers['x-signature']).split(',')
      expect(await verifySignature(request?.body ?? '', first, 'new')).toBe(true)
      expect(await verifySignature(request?.body ?? '', second, 'old')).toBe(true)
    })
  })

  describe('events that wait while their destination changes', () => {
    it('keep their state per URL: a URL still listed goes on where it was, an added one starts, a removed one is not sent to', async () => {
      let up = false
      const [flaky, fine, added] = await Promise.all([sink(() => ({ status: up ? 200 : 503 })), sink(), sink()])
      const { queue, worker } = await fleet({ backoff: () => 1_500 })
      await queue.destinations.set({ id: 'a', webhooks: [{ url: flaky.url }, { url: fine.url }], mode: 'each' })
      const retried = new Promise<void>((resolve) => worker.once('retry', () => resolve()))
      const done = ended(worker, 1)
      await queue.enqueue(event('e1'), { destination: 'a' })
      await retried
      await queue.destinations.set({ id: 'a', webhooks: [{ url: flaky.url }, { url: added.url }], mode: 'each' })
      up = true
      const [result] = await done
      expect(result?.status).toBe('delivered')
      const byUrl = Object.fromEntries((result?.urls ?? []).map((url) => [url.url, url]))
      expect(Object.keys(byUrl).sort()).toEqual([flaky, fine, added].map(href).sort())
      expect(byUrl[href(flaky)]).toMatchObject({ status: 'delivered', attempts: 2 })
      expect(byUrl[href(added)]).toMatchObject({ status: 'delivered', attempts: 1 })
      expect(byUrl[href(fine)]).toMatchObject({ status: 'delivered', attempts: 1 })
      expect(fine.requests).toHaveLength(1)
      expect(added.requests).toHaveLength(1)
    })

    it('of a disabled destination become dead letters, re-driven once it is enabled; of a deleted one, dead letters that say so', async () => {
      let up = false
      const receiver = await sink(() => ({ status: up ? 200 : 503 }))
      const { queue, worker } = await fleet({ backoff: () => 1_000 })
      await queue.destinations.set({ id: 'a', webhooks: [{ url: receiver.url }] })
      await queue.destinations.set({ id: 'gone', webhooks: [{ url: receiver.url }] })
      const retries = new Promise<void>((resolve) => {
        let seen = 0
        worker.on('retry', () => {
          if (++seen === 2) resolve()
        })
      })
      await queue.enqueue(event('e1'), { destination: 'a' })
      await queue.enqueue(event('e2'), { destination: 'gone' })
      await retries
      const refused = ended(worker, 2)
      await queue.destinations.disable('a')
      await queue.destinations.delete('gone')
      await vi.waitFor(async () => expect((await queue.counts()).failed).toBe(2), { timeout: 20_000, interval: 100 })
      // Told as dead letters, each naming its destination, with no URL (a deleted one's are not known).
      const told = (await refused).sort((one, other) => one.eventId.localeCompare(other.eventId))
      expect(told).toMatchObject([
        { status: 'failed', eventId: 'e1', destination: 'a', attempts: 1, urls: [] },
        { status: 'failed', eventId: 'e2', destination: 'gone', attempts: 1, urls: [] },
      ])
      const letters = await queue.deadLetters()
      const byDestination = Object.fromEntries(letters.map((letter) => [letter.destination, letter]))
      expect(byDestination['a']?.reason).toMatch(/^ERR_DESTINATION_DISABLED: .*Enable it and re-drive/)
      expect(byDestination['a']?.urls).toMatchObject([{ url: href(receiver), attempts: 1, status: 'pending' }])
      expect(byDestination['gone']?.reason).toMatch(/^ERR_UNKNOWN_DESTINATION: its destination is not in the registry/)
      const sent = receiver.requests.length

      // Enabled, and its dead letter re-driven at once: a worker reads the registry again before it
      // makes a dead letter, and does not act on a view of it up to a second old.
      await queue.destinations.enable('a')
      up = true
      const done = ended(worker, 1)
      expect(await queue.redrive('e1')).toBe(false)
      expect(await queue.redrive('e1', { destination: 'a' })).toBe(true)
      const [result] = await done
      expect(result).toMatchObject({ eventId: 'e1', status: 'delivered' })
      expect(receiver.requests.length).toBe(sent + 1)
    })
  })

  describe('workers', () => {
    it('without URLs of their own refuse the settings that only those URLs take, naming the fix', () => {
      for (const setting of ['sharedSecret', 'standardSecret', 'mode'] as const) {
        const error = (() => {
          try {
            new WebhookWorker({ [setting]: setting === 'mode' ? 'each' : 'x' }, { connection: connection() })
          } catch (thrown) {
            return thrown
          }
          return undefined
        })()
        expect(error).toMatchObject({ code: 'ERR_INVALID_OPTION', option: setting })
        expect((error as Error).message).toMatch(/each destination of the registry has its own/)
      }
    })

    it('without URLs of their own make an event enqueued without a destination a dead letter that says why', async () => {
      const { queue } = await fleet()
      await queue.enqueue(event('e1'))
      await vi.waitFor(async () => expect((await queue.counts()).failed).toBe(1), { timeout: 10_000, interval: 50 })
      const [letter] = await queue.deadLetters()
      expect(letter?.destination).toBeUndefined()
      expect(letter?.reason).toMatch(/names no destination and this worker has no `webhooks`/)
    })
  })
})
