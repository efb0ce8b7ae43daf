// A worker's round over an event's URLs, each on its own timeline, on a clock the test moves: which
// URLs are due, what a lane that holds a URL back does to it, what the breaker hears of each answer,
// and what a URL fails with when the window ends while it is held. (What an answer means, and the
// retry rules common to both engines, are in delivery-state.test.ts.)
import { describe, expect, it } from 'vitest'
import {
  newDeliveryState,
  WINDOW_GRACE_MS,
  type RoundRules,
  type TargetState,
} from '../../src/webhook/delivery/state.js'
import { runUrlRound, type Admission } from '../../src/webhook/delivery/url-round.js'
import { failsBreaker } from '../../src/webhook/delivery/url-policy.js'
import type { WebhookResponse } from '../../src/webhook/network/transport.js'

const START = 1_000_000
const answer = (status: number): WebhookResponse => ({ ok: true, status, retryAfter: null })
const broken = (failure: 'timeout' | 'network' | 'tls' | 'blocked'): WebhookResponse => ({
  ok: false,
  failure,
  cause: new Error(failure),
})

/** A round's world: a clock, the rules on it, and what the lanes and the breaker heard. */
function worldOf(mode: RoundRules['mode'] = 'each', windowMs = 60_000, count = 2) {
  const clock = { now: START }
  const rules: RoundRules = { mode, now: () => clock.now, backoff: (attempt) => 1_000 * 2 ** attempt }
  const state = newDeliveryState(
    'e1',
    Array.from({ length: count }, (_, index) => index),
    windowMs,
    START,
  )
  /**
   * What each admitted attempt told its lane, by URL: whether its answer counts against the URL
   * (an answer nobody wanted counts for nothing), or `'unused'` for a permit given back unsent.
   */
  const done: Array<[number, boolean | 'unused']> = []
  const admission = (target: TargetState<number>, kind: 'attempt' | 'probe' = 'attempt'): Admission => ({
    kind,
    answered: (response, heard) => done.push([target.endpoint, heard && failsBreaker(response)]),
    unused: () => done.push([target.endpoint, 'unused']),
  })
  const attempt =
    (kind: 'attempt' | 'probe' = 'attempt') =>
    (target: TargetState<number>): Promise<Admission> =>
      Promise.resolve(admission(target, kind))
  return { clock, rules, state, done, attempt, admission }
}

const wait = (until: number, breaker: boolean): Promise<Admission> => Promise.resolve({ kind: 'wait', until, breaker })

describe('runUrlRound', () => {
  it('sends only to the URLs whose own time has come, from the instant it comes', async () => {
    const { rules, state, attempt } = worldOf('each', 60_000, 3)
    const [first, second, third] = state.targets
    if (!first || !second || !third) throw new Error('three targets')
    first.dueAt = START + 1
    second.dueAt = START
    const sent: number[] = []
    const decision = await runUrlRound(state, rules, attempt(), (endpoint) => {
      sent.push(endpoint)
      return Promise.resolve(answer(503))
    })
    expect(sent).toEqual([1, 2])
    expect(state.targets.map((target) => target.attempts)).toEqual([0, 1, 1])
    // The one not yet due is the earliest retry.
    expect(decision).toEqual({ kind: 'retry', dueAt: START + 1 })
  })

  it('leaves a URL its lane holds back until the lane says, unsent and uncounted, and says what held it', async () => {
    const { rules, state } = worldOf()
    const sent: number[] = []
    const decision = await runUrlRound(
      state,
      rules,
      (target) => wait(START + 300 + target.endpoint * 100, target.endpoint === 0),
      (endpoint) => {
        sent.push(endpoint)
        return Promise.resolve(answer(200))
      },
    )
    expect(sent).toEqual([])
    expect(state.targets.map((target) => [target.status, target.attempts, target.dueAt, target.held])).toEqual([
      ['pending', 0, START + 300, 'breaker'],
      ['pending', 0, START + 400, 'slots'],
    ])
    expect(decision).toEqual({ kind: 'retry', dueAt: START + 300 })
  })

  it('never leaves a held URL past the deadline', async () => {
    const { rules, state } = worldOf('each', 10_000, 1)
    const decision = await runUrlRound(
      state,
      rules,
      () => wait(START + 20_000, false),
      () => Promise.resolve(answer(200)),
    )
    expect(state.targets[0]?.dueAt).toBe(START + 10_000)
    expect(decision).toEqual({ kind: 'retry', dueAt: START + 10_000 })
  })

  it('tells the lane of each attempt whether it counts against the URL: no answer in time, no connection, or a 5xx', async () => {
    const { rules, state, done, attempt } = worldOf('each', 60_000, 4)
    const responses = [answer(503), answer(404), broken('timeout'), answer(200)]
    await runUrlRound(state, rules, attempt(), (endpoint) => Promise.resolve(responses[endpoint] ?? answer(200)))
    expect(done.sort(([a], [b]) => a - b)).toEqual([
      [0, true],
      [1, false],
      [2, true],
      [3, false],
    ])
  })

  it('counts a probe as an attempt like any other', async () => {
    const { rules, state, done, attempt } = worldOf('each', 60_000, 1)
    await runUrlRound(state, rules, attempt('probe'), () => Promise.resolve(answer(502)))
    expect(state.targets[0]).toMatchObject({ attempts: 1, status: 'pending', held: undefined })
    expect(done).toEqual([[0, true]])
  })

  it('tells each answer as it is recorded, and nothing of a URL held back', async () => {
    const { rules, state } = worldOf('each', 60_000, 3)
    const heard: Array<[number, string, number]> = []
    let answerSlow = () => {}
    const round = runUrlRound(
      state,
      rules,
      (target) =>
        target.endpoint === 2
          ? wait(START + 500, false)
          : Promise.resolve({ kind: 'attempt', answered: () => {}, unused: () => {} } as const),
      (endpoint) =>
        endpoint === 0
          ? new Promise<WebhookResponse>((resolve) => {
              answerSlow = () => resolve(answer(200))
            })
          : Promise.resolve(answer(503)),
      (target) => heard.push([target.endpoint, target.status, target.attempts]),
    )
    // The quick URL's news does not wait for the slow one.
    await expect.poll(() => heard).toEqual([[1, 'pending', 1]])
    answerSlow()
    await round
    expect(heard).toEqual([
      [1, 'pending', 1],
      [0, 'delivered', 1],
    ])
  })

  it("in mode 'any', sends nothing for a URL admitted after another URL's 2xx ended the event, and gives its lane back", async () => {
    const { rules, state, done, admission: admitted } = worldOf('any', 60_000, 2)
    let admitLate = () => {}
    const sent: number[] = []
    const heard: number[] = []
    const decision = await runUrlRound(
      state,
      rules,
      (target) => {
        const admission = admitted(target)
        if (target.endpoint === 0) return Promise.resolve(admission)
        return new Promise<Admission>((resolve) => {
          admitLate = () => resolve(admission)
        })
      },
      (endpoint) => {
        sent.push(endpoint)
        return Promise.resolve(answer(200))
      },
      (target) => {
        heard.push(target.endpoint)
        // The other URL's lane admits it once this 2xx is in.
        admitLate()
      },
    )
    expect(decision).toEqual({ kind: 'finished', delivered: true })
    expect(sent).toEqual([0])
    expect(heard).toEqual([0])
    expect(done).toEqual([
      [0, false],
      [1, 'unused'],
    ])
    expect(state.targets.map((target) => [target.status, target.attempts])).toEqual([
      ['delivered', 1],
      ['superseded', 0],
    ])
  })

  it("in mode 'any', a URL's lane hears nothing against it from an attempt cut short by another URL's 2xx", async () => {
    const { rules, state, done, attempt } = worldOf('any', 60_000, 2)
    const heard: number[] = []
    await runUrlRound(
      state,
      rules,
      attempt(),
      (endpoint, signal) =>
        endpoint === 1
          ? Promise.resolve(answer(200))
          : new Promise<WebhookResponse>((resolve) =>
              signal?.addEventListener('abort', () => resolve(broken('network'))),
            ),
      (target) => heard.push(target.endpoint),
    )
    expect(done.sort(([a], [b]) => a - b)).toEqual([
      [0, false],
      [1, false],
    ])
    expect(heard).toEqual([1])
    expect(state.targets[0]?.failure).toBeUndefined()
  })

  it("waits for each URL's own backoff, counted in its own attempts, from when its answer came", async () => {
    const { clock, rules, state, attempt } = worldOf()
    const [first, second] = state.targets
    if (!first || !second) throw new Error('two targets')
    first.attempts = 2
    const decision = await runUrlRound(state, rules, attempt(), async () => {
      clock.now = START + 250
      return answer(503)
    })
    // The backoff of a third attempt (4 s) and of a first (1 s), after the answers at START + 250.
    expect([first.dueAt, second.dueAt]).toEqual([START + 4_250, START + 1_250])
    expect(decision).toEqual({ kind: 'retry', dueAt: START + 1_250 })
  })

  it('fails a URL held by its breaker when the window ends with ERR_CIRCUIT_OPEN, keeping its last cause and status', async () => {
    const { clock, rules, state, attempt } = worldOf('each', 5_000, 2)
    await runUrlRound(state, rules, attempt(), (endpoint) =>
      Promise.resolve(endpoint === 0 ? answer(503) : broken('timeout')),
    )
    clock.now = START + 5_000
    const decision = await runUrlRound(
      state,
      rules,
      () => wait(START + 9_000, true),
      () => Promise.resolve(answer(200)),
    )
    expect(decision).toEqual({ kind: 'finished', delivered: false })
    const [http, timeout] = state.targets
    expect(http).toMatchObject({ status: 'failed', held: 'breaker' })
    expect(http?.failure).toEqual({ code: 'ERR_CIRCUIT_OPEN', status: 503 })
    expect(timeout).toMatchObject({ status: 'failed', held: 'breaker' })
    expect(timeout?.failure).toEqual({ code: 'ERR_CIRCUIT_OPEN', cause: new Error('timeout') })
    expect(timeout?.failure).not.toHaveProperty('status')
  })

  it("names the failure that opened the breaker beside ERR_CIRCUIT_OPEN, where the lanes know it, over the URL's own last one; a URL never tried too", async () => {
    const { clock, rules, state, attempt } = worldOf('each', 5_000, 2)
    await runUrlRound(
      state,
      rules,
      (target) => (target.endpoint === 0 ? attempt()(target) : wait(START + 100, false)),
      () => Promise.resolve(answer(500)),
    )
    clock.now = START + 5_000
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:9')
    await runUrlRound(
      state,
      rules,
      () => Promise.resolve({ kind: 'wait', until: START + 9_000, breaker: true, openedBy: { cause: refused } }),
      () => Promise.resolve(answer(200)),
    )
    const [tried, never] = state.targets
    expect(tried?.failure).toEqual({ code: 'ERR_CIRCUIT_OPEN', cause: refused })
    expect(never?.failure).toEqual({ code: 'ERR_CIRCUIT_OPEN', cause: refused })
    expect(never?.attempts).toBe(0)
  })

  it('fails a URL never tried with ERR_BACKLOG_FULL when the window ends while its slots are taken; one tried keeps its failure', async () => {
    const { clock, rules, state, attempt } = worldOf('each', 5_000, 2)
    await runUrlRound(
      state,
      rules,
      (target) => (target.endpoint === 0 ? attempt()(target) : wait(START + 1_000, false)),
      () => Promise.resolve(answer(503)),
    )
    clock.now = START + 5_000
    const decision = await runUrlRound(
      state,
      rules,
      () => wait(START + 9_000, false),
      () => Promise.resolve(answer(200)),
    )
    expect(decision).toEqual({ kind: 'finished', delivered: false })
    expect(state.targets.map((target) => [target.status, target.failure])).toEqual([
      ['failed', { code: 'ERR_HTTP_STATUS', status: 503 }],
      ['failed', { code: 'ERR_BACKLOG_FULL' }],
    ])
  })

  it('sends nothing in a round that starts over a second after the window ended: each URL keeps its last failure, or says what held it', async () => {
    const { clock, rules, state, attempt } = worldOf('each', 5_000, 3)
    await runUrlRound(state, rules, attempt(), () => Promise.resolve(answer(503)))
    clock.now = START + 5_000 + WINDOW_GRACE_MS + 1
    const sent: number[] = []
    const decision = await runUrlRound(
      state,
      rules,
      (target) => (target.endpoint === 2 ? wait(START + 9_000, true) : attempt()(target)),
      (endpoint) => {
        sent.push(endpoint)
        return Promise.resolve(answer(200))
      },
    )
    expect(sent).toEqual([])
    expect(decision).toEqual({ kind: 'finished', delivered: false })
    expect(state.targets.map((target) => [target.status, target.attempts, target.failure?.code])).toEqual([
      ['failed', 1, 'ERR_HTTP_STATUS'],
      ['failed', 1, 'ERR_HTTP_STATUS'],
      ['failed', 1, 'ERR_CIRCUIT_OPEN'],
    ])
  })

  it('still sends in a round that starts at the grace’s last millisecond', async () => {
    const { clock, rules, state, attempt } = worldOf('each', 5_000, 1)
    await runUrlRound(state, rules, attempt(), () => Promise.resolve(answer(503)))
    clock.now = START + 5_000 + WINDOW_GRACE_MS
    const decision = await runUrlRound(state, rules, attempt(), () => Promise.resolve(answer(200)))
    expect(decision).toEqual({ kind: 'finished', delivered: true })
  })

  it('forgets what held a URL once it is sent to: at the end of the window it keeps the failure of its attempt', async () => {
    const { clock, rules, state, attempt } = worldOf('each', 5_000, 2)
    await runUrlRound(
      state,
      rules,
      (target) => wait(START + 1_000, target.endpoint === 0),
      () => Promise.resolve(answer(200)),
    )
    clock.now = START + 5_000
    const decision = await runUrlRound(state, rules, attempt(), () => Promise.resolve(answer(503)))
    expect(decision).toEqual({ kind: 'finished', delivered: false })
    expect(state.targets.map((target) => [target.status, target.held, target.failure])).toEqual([
      ['failed', undefined, { code: 'ERR_HTTP_STATUS', status: 503 }],
      ['failed', undefined, { code: 'ERR_HTTP_STATUS', status: 503 }],
    ])
  })
})
