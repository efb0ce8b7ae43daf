import { afterEach, describe, expect, it, vi } from 'vitest'
import { MAX_TIMER_MS } from '../../src/core/timers.js'
import {
  isDelivered,
  newDeliveryState,
  nextAttempt,
  recordAttempt,
  type DeliveryState,
  type RoundDecision,
  type RoundRules,
  type TargetState,
} from '../../src/webhook/delivery/state.js'
import { runUrlRound } from '../../src/webhook/delivery/url-round.js'
import type { TransportFailure, WebhookResponse } from '../../src/webhook/network/transport.js'

// The rules of a delivery, on the state the engine keeps: what one answer means (both engines), and
// what comes after a worker's round (runUrlRound: each URL on its own timeline). Time is pinned with a fake clock: these rules are about which instant
// is chosen, not about waiting.
const NOW = 1_700_000_000_000
afterEach(() => {
  vi.useRealTimers()
})

function pinClock(at = NOW): void {
  vi.useFakeTimers({ now: at, toFake: ['Date'] })
}

/** Endpoints for the rules to carry: their positions stand in for them, as the rules never look inside. */
const endpoints = (count: number): number[] => Array.from({ length: count }, (_, index) => index)

const answer = (status: number, retryAfter: string | null = null): WebhookResponse => ({ ok: true, status, retryAfter })
const broken = (failure: TransportFailure, cause: unknown = new Error(failure)): WebhookResponse => ({
  ok: false,
  failure,
  cause,
})

/** One attempt, as the engines make it: counted when sent, then its answer recorded. */
function sent(state: TargetState, response: WebhookResponse): void {
  state.attempts++
  recordAttempt(state, response, NOW)
}

function target(): TargetState {
  const [fresh] = newDeliveryState('e1', endpoints(1), 0, NOW).targets
  if (!fresh) throw new Error('no target')
  return fresh
}

describe('recordAttempt: what one answer means', () => {
  it.each([200, 201, 204, 299])('a %i is a success: 2xx delivers', (status) => {
    const state = target()
    sent(state, answer(500))
    sent(state, answer(status))
    expect(state).toMatchObject({ status: 'delivered', attempts: 2, lastStatus: status, failure: undefined })
  })

  it.each([100, 199, 300, 301, 304, 307, 308])('a %i is not a success: 2xx only, and it is not retried', (status) => {
    const state = target()
    sent(state, answer(status))
    expect(state).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastStatus: status,
      failure: { code: 'ERR_HTTP_STATUS', status },
    })
  })

  it.each([500, 502, 503, 599, 408, 429])('a %i waits for a retry, at the Retry-After it asks for', (status) => {
    const state = target()
    sent(state, answer(status, '7'))
    expect(state).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatus: status,
      failure: { code: 'ERR_HTTP_STATUS', status },
      retryAfterMs: 7_000,
    })
  })

  it.each([400, 401, 404, 407, 409, 410, 422, 428, 430, 499])(
    'a %i fails for good: the request itself is refused',
    (status) => {
      const state = target()
      sent(state, answer(status, '7'))
      expect(state).toMatchObject({
        status: 'failed',
        failure: { code: 'ERR_HTTP_STATUS', status },
        retryAfterMs: undefined,
      })
    },
  )

  it('forgets an earlier Retry-After once the next answer asks for none', () => {
    const state = target()
    sent(state, answer(503, '7'))
    sent(state, answer(503))
    expect(state.retryAfterMs).toBeUndefined()
    sent(state, broken('timeout'))
    expect(state).toMatchObject({ status: 'pending', attempts: 3, retryAfterMs: undefined })
  })

  it.each<['timeout' | 'network' | 'proxy', string]>([
    ['timeout', 'ERR_TIMEOUT'],
    ['network', 'ERR_NETWORK'],
    ['proxy', 'ERR_PROXY'],
  ])('a %s waits for a retry (%s), keeping the cause and the last status', (failure, code) => {
    const state = target()
    const cause = new Error('down')
    sent(state, answer(503))
    sent(state, broken(failure, cause))
    expect(state).toMatchObject({ status: 'pending', attempts: 2, lastStatus: 503, failure: { code, cause } })
  })

  it.each<['tls' | 'blocked', string]>([
    ['tls', 'ERR_TLS_CERTIFICATE'],
    ['blocked', 'ERR_BLOCKED_TARGET'],
  ])('a %s failure fails for good (%s): it does not fix itself within a retry window', (failure, code) => {
    const state = target()
    sent(state, broken(failure))
    expect(state).toMatchObject({ status: 'failed', attempts: 1, failure: { code } })
  })
})

describe('isDelivered', () => {
  function withStatuses(...statuses: TargetState['status'][]): DeliveryState {
    const state = newDeliveryState('e1', endpoints(statuses.length), 0, NOW)
    statuses.forEach((status, index) => {
      const entry = state.targets[index]
      if (entry) entry.status = status
    })
    return state
  }

  it("counts an event delivered once any URL accepted it in mode 'any', and only when every URL did in mode 'each'", () => {
    expect(isDelivered(withStatuses('failed', 'delivered'), 'any')).toBe(true)
    expect(isDelivered(withStatuses('failed', 'failed'), 'any')).toBe(false)
    expect(isDelivered(withStatuses('failed', 'delivered'), 'each')).toBe(false)
    expect(isDelivered(withStatuses('delivered', 'delivered'), 'each')).toBe(true)
  })

  it("does not wait in mode 'each' for a URL superseded, yet needs one URL that accepted the event", () => {
    expect(isDelivered(withStatuses('delivered', 'superseded'), 'each')).toBe(true)
    expect(isDelivered(withStatuses('superseded', 'superseded'), 'each')).toBe(false)
  })
})

describe('runUrlRound: what comes after a round', () => {
  const every =
    (...responses: WebhookResponse[]) =>
    (index: number) =>
      Promise.resolve(responses[index] ?? answer(500))
  /** Every URL due is let through: no breaker, no slots taken. */
  const admitAll = () => Promise.resolve({ kind: 'attempt' as const, answered: () => {}, unused: () => {} })
  const urlRound = <E>(
    state: DeliveryState<E>,
    rules: RoundRules,
    send: (endpoint: E, signal: AbortSignal | undefined) => Promise<WebhookResponse>,
  ): Promise<RoundDecision> => runUrlRound(state, rules, admitAll, send)

  it('starts with every URL pending, and a deadline one retry window after the first attempt', () => {
    const state = newDeliveryState('e1', endpoints(3), 60_000, NOW)
    expect(state).toMatchObject({ eventId: 'e1', deadline: NOW + 60_000, rounds: 0 })
    expect(state.targets.map((entry) => [entry.endpoint, entry.status, entry.attempts])).toEqual([
      [0, 'pending', 0],
      [1, 'pending', 0],
      [2, 'pending', 0],
    ])
  })

  it('sends only to URLs still pending', async () => {
    pinClock()
    const state = newDeliveryState('e1', endpoints(2), 60_000, NOW)
    const sent: number[] = []
    const rules = { mode: 'each' as const, now: () => Date.now(), backoff: () => 1_000 }
    await urlRound(state, rules, (index) => {
      sent.push(index)
      return Promise.resolve(index === 0 ? answer(200) : answer(500))
    })
    vi.setSystemTime(NOW + 1_000)
    await urlRound(state, rules, (index) => {
      sent.push(index)
      return Promise.resolve(answer(200))
    })
    expect(sent).toEqual([0, 1, 1])
    expect(state.rounds).toBe(2)
  })

  it("finishes delivered in mode 'any' once one URL accepts, the others superseded", async () => {
    pinClock()
    const state = newDeliveryState('e1', endpoints(3), 60_000, NOW)
    const decision = await urlRound(
      state,
      { mode: 'any', now: () => Date.now(), backoff: () => 1_000 },
      every(answer(503), answer(200), answer(404)),
    )
    expect(decision).toEqual({ kind: 'finished', delivered: true })
    // The 404 is read after the 200, when the round has ended: it changes nothing.
    expect(state.targets.map((entry) => entry.status)).toEqual(['superseded', 'delivered', 'superseded'])
  })

  it("ends a round in mode 'any' at the first 2xx, aborting the attempts still out instead of waiting for them", async () => {
    pinClock()
    const state = newDeliveryState('e1', endpoints(2), 60_000, NOW)
    let silent: AbortSignal | undefined
    const decision = await urlRound(
      state,
      { mode: 'any', now: () => Date.now(), backoff: () => 1_000 },
      (index, signal) => {
        if (index === 1) return Promise.resolve(answer(200))
        silent = signal
        // Silent until aborted, then answered as a transport answers an aborted request.
        return new Promise<WebhookResponse>((resolve) =>
          signal?.addEventListener('abort', () => resolve(broken('network', signal.reason))),
        )
      },
    )
    expect(decision).toEqual({ kind: 'finished', delivered: true })
    expect(state.targets.map((entry) => [entry.status, entry.attempts])).toEqual([
      ['superseded', 1],
      ['delivered', 1],
    ])
    expect(silent?.aborted).toBe(true)
  })

  it("keeps retrying the others in mode 'each' after one URL accepts", async () => {
    pinClock()
    const state = newDeliveryState('e1', endpoints(2), 60_000, NOW)
    const decision = await urlRound(
      state,
      { mode: 'each', now: () => Date.now(), backoff: () => 1_000 },
      every(answer(200), answer(503)),
    )
    expect(decision).toEqual({ kind: 'retry', dueAt: NOW + 1_000 })
    expect(state.targets.map((entry) => entry.status)).toEqual(['delivered', 'pending'])
  })

  it('finishes failed when nothing is pending and nothing was accepted', async () => {
    pinClock()
    const state = newDeliveryState('e1', endpoints(2), 60_000, NOW)
    expect(
      await urlRound(
        state,
        { mode: 'any', now: () => Date.now(), backoff: () => 1_000 },
        every(answer(404), answer(410)),
      ),
    ).toEqual({
      kind: 'finished',
      delivered: false,
    })
  })

  it("retries after backoff(attempt), counting a URL's attempts from 0", async () => {
    pinClock()
    const state = newDeliveryState('e1', endpoints(1), 60_000, NOW)
    const asked: number[] = []
    const rules = {
      mode: 'any' as const,
      now: () => Date.now(),
      backoff: (attempt: number) => {
        asked.push(attempt)
        return 1_000 * (attempt + 1)
      },
    }
    expect(await urlRound(state, rules, every(answer(500)))).toEqual({ kind: 'retry', dueAt: NOW + 1_000 })
    vi.setSystemTime(NOW + 1_000)
    expect(await urlRound(state, rules, every(answer(500)))).toEqual({ kind: 'retry', dueAt: NOW + 3_000 })
    expect(asked).toEqual([0, 1])
  })

  it('waits for a Retry-After longer than the backoff, each URL its own, but never for less than the backoff', async () => {
    pinClock()
    const longer = newDeliveryState('e1', endpoints(2), 60_000, NOW)
    expect(
      await urlRound(
        longer,
        { mode: 'each', now: () => Date.now(), backoff: () => 1_000 },
        every(answer(503, '3'), answer(429, '5')),
      ),
    ).toEqual({ kind: 'retry', dueAt: NOW + 3_000 })
    expect(longer.targets.map((entry) => entry.dueAt)).toEqual([NOW + 3_000, NOW + 5_000])
    const shorter = newDeliveryState('e2', endpoints(1), 60_000, NOW)
    expect(
      await urlRound(shorter, { mode: 'each', now: () => Date.now(), backoff: () => 9_000 }, every(answer(503, '3'))),
    ).toEqual({
      kind: 'retry',
      dueAt: NOW + 9_000,
    })
  })

  it('moves a retry that would fall after the deadline to the deadline itself', async () => {
    pinClock()
    const state = newDeliveryState('e1', endpoints(1), 10_000, NOW)
    expect(
      await urlRound(state, { mode: 'any', now: () => Date.now(), backoff: () => 25_000 }, every(answer(500))),
    ).toEqual({
      kind: 'retry',
      dueAt: NOW + 10_000,
    })
  })

  it('caps a retry at the longest timer delay, so that a huge Retry-After cannot fire at once', async () => {
    pinClock()
    const state = newDeliveryState('e1', endpoints(1), Number.MAX_SAFE_INTEGER - NOW, NOW)
    expect(
      await urlRound(state, { mode: 'any', now: () => Date.now(), backoff: () => 1e15 }, every(answer(500))),
    ).toEqual({
      kind: 'retry',
      dueAt: NOW + MAX_TIMER_MS,
    })
  })

  it('finishes failed at the deadline, each URL keeping its last failure; the deadline instant itself is past', async () => {
    pinClock()
    const state = newDeliveryState('e1', endpoints(2), 0, NOW)
    const decision = await urlRound(
      state,
      { mode: 'each', now: () => Date.now(), backoff: () => 1_000 },
      every(answer(200), answer(503)),
    )
    expect(decision).toEqual({ kind: 'finished', delivered: false })
    expect(state.targets.map((entry) => [entry.status, entry.failure?.code])).toEqual([
      ['delivered', undefined],
      ['failed', 'ERR_HTTP_STATUS'],
    ])
    vi.setSystemTime(NOW - 1)
    const early = newDeliveryState('e2', endpoints(1), 0, NOW)
    expect(await urlRound(early, { mode: 'any', now: () => Date.now(), backoff: () => 5 }, every(answer(500)))).toEqual(
      {
        kind: 'retry',
        dueAt: NOW,
      },
    )
  })

  it('fails every pending URL with ERR_CALLBACK when backoff gives no usable delay, keeping the last HTTP status', async () => {
    pinClock()
    const fault = new Error('backoff broke')
    const state = newDeliveryState('e1', endpoints(3), 60_000, NOW)
    const decision = await urlRound(
      state,
      {
        mode: 'each',
        now: () => Date.now(),
        backoff: () => {
          throw fault
        },
      },
      every(answer(200), answer(503), broken('network')),
    )
    expect(decision).toEqual({ kind: 'finished', delivered: false })
    const [accepted, http, network] = state.targets
    expect(accepted?.status).toBe('delivered')
    expect(http).toMatchObject({
      status: 'failed',
      failure: { code: 'ERR_CALLBACK', callback: 'backoff', cause: fault, status: 503 },
    })
    expect(network).toMatchObject({
      status: 'failed',
      failure: { code: 'ERR_CALLBACK', callback: 'backoff', cause: fault },
    })
    expect(network?.failure).not.toHaveProperty('status')
  })

  it('treats a backoff that returns no finite delay >= 0 like one that throws: ERR_CALLBACK, no retry', async () => {
    pinClock()
    for (const delay of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
      const state = newDeliveryState('e1', endpoints(1), 60_000, NOW)
      expect(
        await urlRound(state, { mode: 'any', now: () => Date.now(), backoff: () => delay }, every(answer(503))),
      ).toEqual({
        kind: 'finished',
        delivered: false,
      })
      expect(state.targets[0]?.failure).toMatchObject({
        code: 'ERR_CALLBACK',
        callback: 'backoff',
        status: 503,
        cause: expect.any(RangeError),
      })
    }
  })
})

describe('nextAttempt: when a URL is tried again', () => {
  const pending = (): TargetState => ({
    endpoint: 0,
    status: 'pending',
    attempts: 1,
    lastStatus: 503,
    failure: undefined,
    retryAfterMs: undefined,
  })

  it('ends the URL, failed, once its window has ended, at its last millisecond included', () => {
    const atEnd = pending()
    expect(nextAttempt(atEnd, () => 1_000, NOW, NOW)).toBeUndefined()
    expect(atEnd.status).toBe('failed')
    const past = pending()
    expect(nextAttempt(past, () => 1_000, NOW + 1, NOW)).toBeUndefined()
    expect(past.status).toBe('failed')
  })

  it('moves a retry that would fall past the window to its end, a millisecond before it', () => {
    const target = pending()
    expect(nextAttempt(target, () => 1_000, NOW - 1, NOW)).toBe(NOW)
    expect(target.status).toBe('pending')
  })
})
