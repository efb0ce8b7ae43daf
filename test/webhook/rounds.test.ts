// What the in-memory destination and the BullMQ worker share: signing, starting and finishing an
// event, and what is told about it; the sending runs as the worker's rounds do (runUrls).
import { describe, expect, it } from 'vitest'
import { DeliveryRounds, type DeliveryEvents, type RoundAudience } from '../../src/webhook/delivery/rounds.js'
import { createEngine } from '../../src/webhook/delivery/engine-parts.js'
import type { WebhookSettings } from '../../src/webhook/delivery/settings.js'
import type { AttemptNotice } from '../../src/webhook/delivery/result.js'
import type { Signer } from '../../src/webhook/signing/signer.js'
import type { WebhookRequest, WebhookResponse } from '../../src/webhook/network/transport.js'

/** One emitted event: its name and what it carried. */
type Told = [event: keyof DeliveryEvents, told: unknown]

/** Rounds over a transport that records each request and answers `status` for its URL. */
function rounds(
  settings: Omit<WebhookSettings, 'transport'>,
  options: {
    answers: Record<string, number>
    signer?: Signer
    listening?: Array<'attempt' | 'retry'>
    /** How long each URL takes to answer, in ms (none: at once). */
    delays?: Record<string, number>
  },
) {
  const requests: WebhookRequest[] = []
  const told: Told[] = []
  const transport = {
    send: (request: WebhookRequest): Promise<WebhookResponse> => {
      requests.push(request)
      const response: WebhookResponse = { ok: true, status: options.answers[request.url] ?? 200, retryAfter: null }
      const delay = options.delays?.[request.url]
      return delay === undefined
        ? Promise.resolve(response)
        : new Promise((resolve) => setTimeout(() => resolve(response), delay))
    },
  }
  const engine = createEngine(
    { ...settings, transport },
    {
      transport: () => {
        throw new Error('the settings name a transport')
      },
      signer: () => options.signer ?? (() => 'signed'),
    },
  )
  const audience: RoundAudience = {
    listenerCount: (event) => (options.listening ?? ['attempt', 'retry']).filter((name) => name === event).length,
    emit: (event, ...args) => told.push([event, args[0]]),
  }
  return { rounds: new DeliveryRounds(engine, audience, () => Date.now()), requests, told }
}

/** Every URL due is let through: no breaker, no slots taken. */
const admitAll = () => Promise.resolve({ kind: 'attempt' as const, answered: () => {}, unused: () => {} })

const a = 'http://a.test/'
const b = 'http://b.test/'

describe('DeliveryRounds', () => {
  it('signs a body once for all the attempts of a round', async () => {
    let signed = 0
    const signer: Signer = (body) => {
      signed++
      return `sig-${body.length}`
    }
    const { rounds: engine, requests } = rounds(
      { webhooks: [{ url: a }, { url: b }], sharedSecret: 's' },
      { answers: {}, signer },
    )
    const prepared = engine.prepare('e1', '{}')
    expect(prepared).toEqual({ eventId: 'e1', body: '{}', signature: 'sig-2' })
    if ('cause' in prepared || prepared instanceof Promise) throw new Error('expected a signed body')
    await engine.runUrls(engine.start('e1'), prepared, admitAll)
    expect(signed).toBe(1)
    expect(requests.map((request) => request.headers['x-signature'])).toEqual(['sig-2', 'sig-2'])
  })

  it("tells each attempt's time, and an event's from the start the engine gives", async () => {
    const { rounds: engine, told } = rounds(
      { webhooks: [{ url: a }, { url: b }], mode: 'each' },
      { answers: {}, delays: { [a]: 40 } },
    )
    const state = engine.start('e1')
    await engine.runUrls(state, { eventId: 'e1', body: '{}', signature: undefined }, admitAll)
    const durations = Object.fromEntries(
      told.map(([, notice]) => [(notice as AttemptNotice).url, (notice as AttemptNotice).durationMs]),
    )
    // Measured from sending to the answer: at least the receiver's delay (timers never fire early).
    expect(durations[a]).toBeGreaterThanOrEqual(35)
    expect(durations[b]).toBeGreaterThanOrEqual(0)
    // On the rules' clock (Date.now here), from the start given; none given, none told.
    expect(engine.finish(state, Date.now() - 5_000).durationMs).toBeGreaterThanOrEqual(5_000)
    expect('durationMs' in engine.finish(state)).toBe(false)
  })

  it('sends unsigned bodies without calling any signer when there is no secret', () => {
    const { rounds: engine } = rounds({ webhooks: [{ url: a }] }, { answers: {} })
    expect(engine.prepare('e1', '{}')).toEqual({ eventId: 'e1', body: '{}', signature: undefined })
  })

  it.each<[string, Signer]>([
    [
      'throws',
      () => {
        throw new Error('no key')
      },
    ],
    ['rejects', () => Promise.reject(new Error('no key'))],
    ['returns what cannot be a header', () => 'two\nlines'],
  ])('turns a signer that %s into ERR_CALLBACK at every URL, sending nothing', async (_case, signer) => {
    const {
      rounds: engine,
      requests,
      told,
    } = rounds({ webhooks: [{ url: a }, { url: b }], sharedSecret: 's' }, { answers: {}, signer })
    const prepared = await engine.prepare('e1', '{}')
    if (!('cause' in prepared)) throw new Error('expected the signer to fail')
    const state = engine.start('e1')
    expect(engine.refuseUnsigned(state, prepared)).toEqual({ kind: 'finished', delivered: false })
    const result = engine.finish(state)
    expect(result).toMatchObject({ status: 'failed', eventId: 'e1', attempts: 0 })
    expect(result.urls.map((url) => [url.url, url.status, url.lastError?.code])).toEqual([
      [a, 'failed', 'ERR_CALLBACK'],
      [b, 'failed', 'ERR_CALLBACK'],
    ])
    expect(result.urls[0]?.lastError?.message).toMatch(
      /The platform's signer failed .*nothing is sent unsigned: http:\/\/a\S* got no further request/,
    )
    expect(told).toEqual([['failed', result]])
    expect(requests).toEqual([])
  })

  it('fails only the URLs still pending when a later round cannot be signed', async () => {
    const { rounds: engine } = rounds(
      { webhooks: [{ url: a }, { url: b }], mode: 'each', backoff: () => 1_000 },
      { answers: { [b]: 503 } },
    )
    const state = engine.start('e1')
    const prepared = engine.prepare('e1', '{}')
    if ('cause' in prepared || prepared instanceof Promise) throw new Error('expected an unsigned body')
    expect((await engine.runUrls(state, prepared, admitAll)).kind).toBe('retry')
    engine.refuseUnsigned(state, { cause: new Error('no key') })
    expect(state.targets.map((target) => [target.status, target.failure?.code])).toEqual([
      ['delivered', undefined],
      ['failed', 'ERR_CALLBACK'],
    ])
    expect(engine.finish(state).status).toBe('failed')
  })

  it('tells each attempt of a round, and the retries it leaves, to listeners only', async () => {
    const answers = { [a]: 200, [b]: 503 }
    const settings = { webhooks: [{ url: a }, { url: b }], mode: 'each' as const, backoff: () => 1_000 }
    const heard = rounds(settings, { answers })
    const state = heard.rounds.start('e1')
    const decision = await heard.rounds.runUrls(state, { eventId: 'e1', body: '{}', signature: undefined }, admitAll)
    if (decision.kind !== 'retry') throw new Error('expected a retry')
    heard.rounds.announceRetry(state, decision.dueAt)
    expect(heard.told).toMatchObject([
      ['attempt', { url: a, accepted: true, status: 200 }],
      ['attempt', { url: b, accepted: false, status: 503 }],
      ['retry', { eventId: 'e1', url: b, attempts: 1, retryAt: decision.dueAt }],
    ])

    const unheard = rounds(settings, { answers, listening: [] })
    const quiet = unheard.rounds.start('e1')
    await unheard.rounds.runUrls(quiet, { eventId: 'e1', body: '{}', signature: undefined }, admitAll)
    unheard.rounds.announceRetry(quiet, Date.now())
    expect(unheard.told).toEqual([])
  })

  it("reports a finished event by the mode's rule, as delivered or failed", async () => {
    const { rounds: engine, told } = rounds({ webhooks: [{ url: a }, { url: b }] }, { answers: { [a]: 404 } })
    const state = engine.start('e1')
    expect(await engine.runUrls(state, { eventId: 'e1', body: '{}', signature: undefined }, admitAll)).toEqual({
      kind: 'finished',
      delivered: true,
    })
    const result = engine.finish(state)
    expect(result.urls.map((url) => url.status)).toEqual(['failed', 'delivered'])
    expect(told.filter(([event]) => event === 'delivered')).toEqual([['delivered', result]])
  })
})
