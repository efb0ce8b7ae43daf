// Many destinations in memory: a WebhookDestination delivers each event to the destination it
// names (its URLs, headers, secrets and mode), lanes are per URL across destinations, and a change
// of a destination reaches the events already waiting at their next attempt. Real receivers on
// loopback; every wait is for a condition (a notice, a request), never for a guessed delay.
import { afterEach, describe, expect, it } from 'vitest'
import {
  verifySignature,
  type DeliveryResult,
  type RetryNotice,
  type WebhookDestination,
} from '../../src/webhook/index.js'
import type { WebhookPlatform } from '../../src/webhook/delivery/engine-parts.js'
import { defaultPlatform as nodePlatform } from '../../src/webhook/platform/node.js'
import { defaultPlatform as webPlatform } from '../../src/webhook/platform/web.js'
import { WebhookDestinationBase } from '../../src/webhook/delivery/destination-base.js'
import { ENTRIES_BEFORE_SWEEP } from '../../src/core/swept-map.js'
import { UnknownDestinationError } from '../../src/webhook/delivery/unknown-destination-error.js'
import { DestinationConflictError } from '../../src/webhook/delivery/destination-conflict-error.js'
import { startSink, type Sink } from '../helpers/sink.js'
import { startChaosSink } from '../helpers/chaos-sink.js'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Signer } from '../../src/webhook/signing/signer.js'

const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

async function sink(respond?: Parameters<typeof startSink>[0]): Promise<Sink> {
  const started = await startSink(respond)
  open.push(started)
  return started
}

function engine(
  settings: ConstructorParameters<typeof WebhookDestination>[0] = {},
  platform: WebhookPlatform = nodePlatform,
): WebhookDestinationBase {
  const made = new WebhookDestinationBase({ backoff: () => 20, ...settings }, platform)
  open.push({ close: () => made.close({ timeout: 100 }) })
  return made
}

const track = (id: string) => ({ type: 'track' as const, userId: 'u1', event: 'E', messageId: id })

/** A receiver that holds every request until `release()`, then answers 200; `versions` are their X-Version headers. */
async function holding(): Promise<{ url: string; held: () => number; release(): void; versions: unknown[] }> {
  const waiting: ServerResponse[] = []
  const versions: unknown[] = []
  const server = createServer((request, response) => {
    request.resume()
    versions.push(request.headers['x-version'])
    waiting.push(response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const release = () => {
    for (const response of waiting.splice(0)) response.writeHead(200).end()
  }
  open.push({
    close: () => {
      release()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => waiting.length,
    release,
    versions,
  }
}

/** Resolves with the first notice of `name` the engine emits. */
function next<T>(emitter: WebhookDestinationBase, name: 'retry' | 'attempt'): Promise<T> {
  return new Promise((resolve) => emitter.once(name, (notice) => resolve(notice as T)))
}

describe('WebhookDestination with destinations', () => {
  it('sends each event to its destination: its URLs, headers and secret; results and notices name it', async () => {
    const acme = await sink()
    const globex = await sink()
    const own = await sink()
    const made = engine({ webhooks: [{ url: own.url }], sharedSecret: 'own-secret' })
    made.destinations.set({
      id: 'acme',
      webhooks: [{ url: acme.url, headers: { 'X-Team': 'acme' } }],
      sharedSecret: 'acme-s3cret',
    })
    made.destinations.set({
      id: 'globex',
      webhooks: [{ url: globex.url }],
      standardSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    })
    const attempts: string[] = []
    made.on('attempt', (notice) => attempts.push(`${notice.destination ?? '-'} ${notice.url}`))
    const [a, g, o] = await Promise.all([
      made.deliver(track('e1'), { destination: 'acme' }),
      made.deliver(track('e2'), { destination: 'globex' }),
      made.deliver(track('e3')),
    ])
    expect(a).toMatchObject({ status: 'delivered', destination: 'acme' })
    expect(g).toMatchObject({ status: 'delivered', destination: 'globex' })
    expect(o.status).toBe('delivered')
    expect(o).not.toHaveProperty('destination')
    const [toAcme] = acme.requests
    expect(toAcme?.headers['x-team']).toBe('acme')
    expect(await verifySignature(toAcme?.body ?? '', toAcme?.headers['x-signature'], 'acme-s3cret')).toBe(true)
    expect(globex.requests[0]?.headers['webhook-signature']).toMatch(/^v1,/)
    expect(globex.requests[0]?.headers['x-signature']).toBeUndefined()
    expect(
      await verifySignature(own.requests[0]?.body ?? '', own.requests[0]?.headers['x-signature'], 'own-secret'),
    ).toBe(true)
    expect(attempts.sort()).toEqual([`- ${own.url}/`, `acme ${acme.url}/`, `globex ${globex.url}/`])
  })

  it('serves only its destinations without webhooks; refuses what it cannot deliver at once, naming the fix', async () => {
    const made = engine()
    await expect(made.deliver(track('e1'))).rejects.toMatchObject({ code: 'ERR_INVALID_OPTION', option: 'destination' })
    await expect(made.deliver(track('e1'), { destination: 'nobody' })).rejects.toBeInstanceOf(UnknownDestinationError)
    await expect(made.deliver(track('e1'), { destination: 'no/such' })).rejects.toMatchObject({ option: 'destination' })
    await expect(made.deliver(track('e1'), { destinationId: 'x' } as never)).rejects.toThrow(/destination/)
    expect(() => engine({ sharedSecret: 's' } as never)).toThrow(/own `webhooks`, and it has none/)
    expect(() =>
      made.destinations.set({
        id: 'six',
        webhooks: Array.from({ length: 6 }, (_, i) => ({ url: `https://h${i}.example/` })),
      }),
    ).toThrow(/destination\.webhooks/)
    expect(() => made.destinations.set({ id: 'bad', webhooks: [{ url: 'ftp://x' }] })).toThrow(
      /destination\.webhooks\[0\]\.url/,
    )
    expect(() =>
      made.destinations.set({ id: 'bad', webhooks: [{ url: 'https://x.example/' }], standardSecret: 'nope' }),
    ).toThrow(/destination\.standardSecret/)
    expect(made.destinations.list().destinations).toEqual([])
  })

  it('refuses a destination that lists a URL twice, and writes nothing', () => {
    const made = engine()
    expect(() =>
      made.destinations.set({ id: 'acme', webhooks: [{ url: 'http://a.example/d' }, { url: 'HTTP://a.example/d' }] }),
    ).toThrow('Invalid option `destination.webhooks[1].url`: http://a.example/d is destination.webhooks[0].url already')
    expect(made.destinations.get('acme')).toBeUndefined()
  })

  it('keeps versions as the BullMQ registry does: ifVersion, disable, enable, delete', () => {
    const made = engine()
    const first = made.destinations.set({ id: 'acme', webhooks: [{ url: 'https://a.example/' }] }, { ifVersion: 0 })
    expect(first).toMatchObject({ id: 'acme', mode: 'any', enabled: true, version: 1 })
    expect(() =>
      made.destinations.set({ id: 'acme', webhooks: [{ url: 'https://b.example/' }] }, { ifVersion: 0 }),
    ).toThrow(DestinationConflictError)
    expect(() =>
      made.destinations.set({ id: 'acme', webhooks: [{ url: 'https://b.example/' }] }, { ifVersion: 0 }),
    ).toThrow(/exists already, at version 1: ifVersion 0 writes only a new one/)
    expect(() =>
      made.destinations.set({ id: 'gone', webhooks: [{ url: 'https://b.example/' }] }, { ifVersion: 4 }),
    ).toThrow(
      expect.objectContaining({
        code: 'ERR_DESTINATION_CONFLICT',
        expected: 4,
        version: 0,
        message: expect.stringMatching(
          /is not in the registry, so not at version 4: it was deleted, or never set\. Set it without ifVersion/,
        ),
      }),
    )
    expect(made.destinations.disable('acme')).toMatchObject({ enabled: false, version: 2 })
    expect(made.destinations.disable('acme')).toMatchObject({ version: 2 })
    expect(made.destinations.enable('acme')).toMatchObject({ enabled: true, version: 3 })
    expect(made.destinations.get('acme')?.webhooks).toEqual([{ url: 'https://a.example/' }])
    expect(made.destinations.disable('nobody')).toBeUndefined()
    expect(made.destinations.delete('acme')).toBe(true)
    expect(made.destinations.delete('acme')).toBe(false)
    expect(made.destinations.get('acme')).toBeUndefined()
    // A deletion is a change too: what is set after it has a newer version.
    expect(made.destinations.set({ id: 'acme', webhooks: [{ url: 'https://a.example/' }] }).version).toBe(5)
    expect(() =>
      made.destinations.set({ id: 'b', webhooks: [{ url: 'https://b.example/' }] }, { ifVersion: -1 }),
    ).toThrow(expect.objectContaining({ option: 'ifVersion' }))
    // A misspelt option is refused, not ignored: it would drop the protection without a word.
    expect(() =>
      made.destinations.set({ id: 'b', webhooks: [{ url: 'https://b.example/' }] }, { ifversion: 5 } as never),
    ).toThrow(/ifVersion/)
    made.destinations.set({ id: 'b', webhooks: [{ url: 'https://b.example/' }] })
    made.destinations.set({ id: 'a', webhooks: [{ url: 'https://a.example/' }] })
    expect(made.destinations.list().destinations.map((stored) => stored.id)).toEqual(['a', 'acme', 'b'])
  })

  it('answers a disabled destination failed at once, sending nothing, and sends again once enabled', async () => {
    const receiver = await sink()
    const made = engine()
    made.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url }], enabled: false })
    const failed: DeliveryResult[] = []
    made.on('failed', (result) => failed.push(result))
    const result = await made.deliver(track('e1'), { destination: 'acme' })
    expect(result).toMatchObject({ status: 'failed', destination: 'acme', attempts: 0 })
    expect(result.urls[0]?.lastError?.code).toBe('ERR_DESTINATION_DISABLED')
    expect(result.urls[0]?.lastError?.message).toMatch(/Enable the destination/)
    expect(failed).toEqual([result])
    made.destinations.enable('acme')
    expect((await made.deliver(track('e1'), { destination: 'acme' })).status).toBe('delivered')
    expect(receiver.requests).toHaveLength(1)
  })

  it.each([
    ['node:crypto', nodePlatform],
    ['Web Crypto and fetch', webPlatform],
  ])(
    'moves a waiting event to the URLs, headers and secret set meanwhile; state follows the URL (%s)',
    async (_, platform) => {
      const failing = await sink(() => ({ status: 503 }))
      const kept = await sink((_request, index) => ({ status: index === 0 ? 503 : 200 }))
      const added = await sink()
      const made = engine({}, platform)
      made.destinations.set({
        id: 'acme',
        webhooks: [{ url: failing.url }, { url: kept.url, headers: { 'X-Version': '1' } }],
        sharedSecret: 'old',
        mode: 'each',
      })
      const retried = new Promise<void>((resolve) => {
        let notices = 0
        made.on('retry', () => ++notices === 2 && resolve())
      })
      const delivering = made.deliver(track('e1'), { destination: 'acme' })
      await retried
      // Both URLs failed once and wait: the failing one is dropped, the other gets new headers, one URL is added.
      made.destinations.set({
        id: 'acme',
        webhooks: [{ url: kept.url, headers: { 'X-Version': '2' } }, { url: added.url }],
        sharedSecret: 'new',
        mode: 'each',
      })
      const result = await delivering
      expect(result.status).toBe('delivered')
      expect(result.urls.map((url) => [url.url, url.status, url.attempts])).toEqual([
        [`${failing.url}/`, 'superseded', 1],
        [`${kept.url}/`, 'delivered', 2],
        [`${added.url}/`, 'delivered', 1],
      ])
      expect(failing.requests).toHaveLength(1)
      const retry = kept.requests[1]
      expect(retry?.headers['x-version']).toBe('2')
      expect(await verifySignature(retry?.body ?? '', retry?.headers['x-signature'], 'new')).toBe(true)
      expect(
        await verifySignature(added.requests[0]?.body ?? '', added.requests[0]?.headers['x-signature'], 'new'),
      ).toBe(true)
    },
  )

  it.each([
    ['disable', 'ERR_DESTINATION_DISABLED'],
    ['delete', 'ERR_UNKNOWN_DESTINATION'],
  ] as const)('ends a waiting event at its next attempt after %s, with %s, and sends no more', async (change, code) => {
    const failing = await sink(() => ({ status: 503 }))
    const made = engine()
    made.destinations.set({ id: 'acme', webhooks: [{ url: failing.url }] })
    const delivering = made.deliver(track('e1'), { destination: 'acme' })
    const notice = await next<RetryNotice>(made, 'retry')
    expect(notice.destination).toBe('acme')
    made.destinations[change]('acme')
    const result = await delivering
    expect(result).toMatchObject({ status: 'failed', destination: 'acme', attempts: 1 })
    expect(result.urls[0]?.lastError?.code).toBe(code)
    expect(failing.requests).toHaveLength(1)
  })

  it("keeps what a URL settled when its destination is disabled or changes under a waiting event (mode 'each')", async () => {
    const ok = await sink()
    // Each event's first request fails, its retry is accepted.
    const tried = new Set<unknown>()
    const failing = await sink((request) => {
      const first = !tried.has(request.headers['webhook-id'])
      tried.add(request.headers['webhook-id'])
      return { status: first ? 503 : 200 }
    })
    const made = engine()
    made.destinations.set({ id: 'a', webhooks: [{ url: ok.url }, { url: failing.url }], mode: 'each' })
    made.destinations.set({ id: 'b', webhooks: [{ url: ok.url }, { url: failing.url }], mode: 'each' })
    // Disabled: the URL that delivered stays delivered; the one waiting fails, and nothing of it is left.
    const first = made.deliver(track('e1'), { destination: 'a' })
    await next<RetryNotice>(made, 'retry')
    made.destinations.disable('a')
    const disabled = await first
    expect(disabled.urls.map((url) => [url.status, url.lastError?.code])).toEqual([
      ['delivered', undefined],
      ['failed', 'ERR_DESTINATION_DISABLED'],
    ])
    expect(made.backlog().find((url) => url.url === `${failing.url}/`)).toMatchObject({
      queued: 0,
      retrying: 0,
      inFlight: 0,
    })
    // Its delivered URL removed: it stays delivered; the one waiting goes on.
    const second = made.deliver(track('e2'), { destination: 'b' })
    await next<RetryNotice>(made, 'retry')
    made.destinations.set({ id: 'b', webhooks: [{ url: failing.url }], mode: 'each' })
    const changed = await second
    expect(changed.status).toBe('delivered')
    expect(changed.urls.map((url) => [url.url, url.status])).toEqual([
      [`${ok.url}/`, 'delivered'],
      [`${failing.url}/`, 'delivered'],
    ])
  })

  it('sends the URL an event waits for with the headers set meanwhile', async () => {
    const receiver = await sink((_request, index) => ({ status: index === 0 ? 503 : 200 }))
    const made = engine()
    made.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url, headers: { 'X-Version': '1' } }] })
    const delivering = made.deliver(track('e1'), { destination: 'acme' })
    await next<RetryNotice>(made, 'retry')
    made.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url, headers: { 'X-Version': '2' } }] })
    expect((await delivering).status).toBe('delivered')
    expect(receiver.requests.map((request) => request.headers['x-version'])).toEqual(['1', '2'])
  })

  it('sends an event queued for a slot with the headers set while it was queued', async () => {
    const receiver = await holding()
    // A fifth of 5: one slot per URL of a destination.
    const made = engine({ maxConcurrency: 5 })
    made.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url, headers: { 'X-Version': '1' } }] })
    const first = made.deliver(track('e1'), { destination: 'acme' })
    const second = made.deliver(track('e2'), { destination: 'acme' })
    await expect.poll(() => receiver.held()).toBe(1)
    expect(made.backlog()).toEqual([expect.objectContaining({ queued: 1, inFlight: 1 })])
    made.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url, headers: { 'X-Version': '2' } }] })
    receiver.release()
    await first
    await expect.poll(() => receiver.held()).toBe(1)
    receiver.release()
    expect((await second).status).toBe('delivered')
    expect(receiver.versions).toEqual(['1', '2'])
  })

  it('does not send a URL that another URL superseded while its new signature was being made', async () => {
    const failing = await sink(() => ({ status: 503 }))
    const slow = await holding()
    let open: (() => void) | undefined
    const signing = new Promise<void>((resolve) => {
      open = resolve
    })
    let asked: (() => void) | undefined
    const signerAsked = new Promise<void>((resolve) => {
      asked = resolve
    })
    // New secrets sign in a promise that this test lets go: as Web Crypto does, under its control.
    const platform: WebhookPlatform = {
      transport: nodePlatform.transport,
      signer: (format, secret) => {
        const node = nodePlatform.signer(format, secret)
        if (secret !== 'gated') return node
        const gated: Signer = (data) => {
          asked?.()
          return signing.then(() => node(data))
        }
        return gated
      },
    }
    const made = engine({}, platform)
    made.destinations.set({ id: 'acme', webhooks: [{ url: failing.url }, { url: slow.url }], sharedSecret: 'old' })
    const delivering = made.deliver(track('e1'), { destination: 'acme' })
    await next<RetryNotice>(made, 'retry')
    made.destinations.set({ id: 'acme', webhooks: [{ url: failing.url }, { url: slow.url }], sharedSecret: 'gated' })
    // The failing URL came due and waits for its new signature; the slow one then accepts the event.
    await signerAsked
    slow.release()
    const result = await delivering
    expect(result.urls.map((url) => url.status)).toEqual(['superseded', 'delivered'])
    open?.()
    await signing
    await new Promise((resolve) => setImmediate(resolve))
    expect(made.backlog().find((url) => url.url === `${failing.url}/`)).toMatchObject({
      queued: 0,
      inFlight: 0,
      retrying: 0,
    })
    expect(failing.requests).toHaveLength(1)
  })

  it("keeps the engine's own URLs through every sweep, listed first", async () => {
    const receiver = await sink()
    const made = engine({ webhooks: [{ url: `${receiver.url}/own` }] })
    expect((await made.deliver(track('own'))).status).toBe('delivered')
    const ids = Array.from({ length: ENTRIES_BEFORE_SWEEP + 10 }, (_, index) => `d${index}`)
    for (const id of ids) made.destinations.set({ id, webhooks: [{ url: `${receiver.url}/${id}` }] })
    for (let at = 0; at < ids.length; at += 200)
      await Promise.all(ids.slice(at, at + 200).map((id) => made.deliver(track(id), { destination: id })))
    // Swept more than once on the way: only the idle lanes of destinations went.
    expect(made.backlog()[0]?.url).toBe(`${receiver.url}/own`)
  })

  it('holds one lane per URL across destinations: a URL two destinations list has one breaker', async () => {
    const shared = await sink(() => ({ status: 503 }))
    const made = engine({
      breaker: { failures: 2, failureRate: 0.5, windowMs: 60_000, coolDownMs: 60_000 },
      retryWindowMs: 0,
    })
    made.destinations.set({ id: 'a', webhooks: [{ url: shared.url, headers: { 'X-Who': 'a' } }] })
    made.destinations.set({ id: 'b', webhooks: [{ url: shared.url, headers: { 'X-Who': 'b' } }] })
    const states: string[] = []
    made.on('url-state', (notice) => states.push(notice.circuit))
    await made.deliver(track('e1'), { destination: 'a' })
    await made.deliver(track('e2'), { destination: 'b' })
    expect(states).toEqual(['open'])
    expect(made.backlog()).toEqual([{ url: `${shared.url}/`, queued: 0, retrying: 0, inFlight: 0, circuit: 'open' }])
    expect(shared.requests.map((request) => request.headers['x-who'])).toEqual(['a', 'b'])
  })

  it("one destination's silent receiver holds up no other destination", async () => {
    const silent = await startChaosSink(() => ({ kind: 'hang' }))
    open.push(silent)
    const healthy = await sink()
    const made = engine({ timeoutMs: 15_000, maxConcurrency: 10 })
    made.destinations.set({ id: 'silent', webhooks: [{ url: silent.url }] })
    made.destinations.set({ id: 'healthy', webhooks: [{ url: healthy.url }] })
    for (let index = 0; index < 50; index++) void made.deliver(track(`s${index}`), { destination: 'silent' })
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, index) => made.deliver(track(`h${index}`), { destination: 'healthy' })),
    )
    expect(results.every((result) => result.status === 'delivered')).toBe(true)
    // A fifth of maxConcurrency per URL of the registry: the silent one holds two slots, not ten.
    expect(made.backlog().find((url) => url.url === `${silent.url}/`)).toMatchObject({ inFlight: 2, queued: 48 })
  })

  it('drops the lanes of URLs that have no work as new ones come: memory follows the URLs with work', async () => {
    const receiver = await sink()
    const dead = await sink(() => ({ status: 503 }))
    const made = engine({
      retryWindowMs: 0,
      // A thousand deliveries at once, each sent at once: with no retry window, one that waited
      // for a slot past its window's grace (a loaded machine) would fail, and one that waited in
      // the receiver's listen queue past its timeout too.
      maxConcurrency: 2_048,
      timeoutMs: 30_000,
      breaker: { failures: 1, failureRate: 0.5, windowMs: 60_000, coolDownMs: 600_000 },
    })
    // A URL whose breaker is open keeps its lane, idle or not: the next event to it must wait too.
    made.destinations.set({ id: 'dead', webhooks: [{ url: dead.url }] })
    expect((await made.deliver(track('dead'), { destination: 'dead' })).status).toBe('failed')
    const batch = ENTRIES_BEFORE_SWEEP + 10
    const deliverTo = async (from: number) => {
      const ids = Array.from({ length: batch }, (_, index) => `d${from + index}`)
      for (const id of ids) made.destinations.set({ id, webhooks: [{ url: `${receiver.url}/${id}` }] })
      const results = await Promise.all(ids.map((id) => made.deliver(track(id), { destination: id })))
      expect(
        results.filter((result) => result.status !== 'delivered').map((result) => result.urls[0]?.lastError?.message),
      ).toEqual([])
    }
    await deliverTo(0)
    // Swept once on the way, while every lane had work: all are held, and the dead one.
    expect(made.backlog()).toHaveLength(batch + 1)
    // The next sweep waits until the lanes have doubled: one more lane is just one more.
    made.destinations.set({ id: 'one-more', webhooks: [{ url: `${receiver.url}/one-more` }] })
    await made.deliver(track('one-more'), { destination: 'one-more' })
    expect(made.backlog()).toHaveLength(batch + 2)
    await deliverTo(batch)
    const held = made.backlog().map((url) => url.url)
    expect(held.length).toBeLessThanOrEqual(batch + 2)
    expect(held).not.toContain(`${receiver.url}/d0`)
    expect(made.backlog().find((url) => url.url === `${dead.url}/`)?.circuit).toBe('open')
    expect(held).toContain(`${receiver.url}/d${2 * batch - 1}`)
  })
})
