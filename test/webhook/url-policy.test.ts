// One URL's policy on a clock the test moves: which answers count against its breaker, and in
// what order its breaker, its slots and its rate admit a delivery, each given back when a later
// one says wait. (The same answers through both engines, end to end: policy-table.test.ts.)
import { describe, expect, it } from 'vitest'
import { BREAKER_DEFAULTS, type CircuitState } from '../../src/webhook/delivery/circuit-breaker.js'
import { TokenBucket } from '../../src/webhook/delivery/rate-limit.js'
import {
  failsBreaker,
  UNREAD,
  UrlPolicy,
  type Admission,
  type SharedCircuit,
  type UrlPolicyRules,
} from '../../src/webhook/delivery/url-policy.js'
import type { TransportFailure, WebhookResponse } from '../../src/webhook/network/transport.js'
import type { AttemptFailure } from '../../src/webhook/delivery/failure.js'

const answer = (status: number): WebhookResponse => ({ ok: true, status, retryAfter: null })
const broken = (failure: TransportFailure): WebhookResponse => ({
  ok: false,
  failure,
  cause: new Error(failure),
})

function policyOf(rules: Partial<UrlPolicyRules> = {}) {
  const clock = { now: 1_000 }
  const states: CircuitState[] = []
  const policy = new UrlPolicy('https://hooks.example.com/in', {
    slots: 2,
    breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 },
    timeoutMs: 5_000,
    now: () => clock.now,
    circuit: (_url, state) => states.push(state),
    ...rules,
  })
  return { policy, clock, states }
}

const admitted = (admission: Admission | Promise<Admission>): Admission => {
  if (admission instanceof Promise) throw new Error('expected an answer at once')
  return admission
}

describe('failsBreaker: what counts against a URL, in both engines', () => {
  it.each<[string, WebhookResponse, boolean]>([
    ['a timeout', broken('timeout'), true],
    [
      'a network error (refused, reset, no such name, a broken answer, a transport that threw)',
      broken('network'),
      true,
    ],
    ['an untrusted certificate', broken('tls'), true],
    ['a blocked address: no request was made', broken('blocked'), false],
    ['the egress proxy’s own failure: nothing reached the receiver', broken('proxy'), false],
    ['a 500', answer(500), true],
    ['a 503', answer(503), true],
    ['a status past 599', answer(600), true],
    ['a 499', answer(499), false],
    ['a 429', answer(429), false],
    ['a 404', answer(404), false],
    ['a 200', answer(200), false],
  ])('%s: %s', (_, response, fails) => {
    expect(failsBreaker(response)).toBe(fails)
  })
})

describe('UrlPolicy', () => {
  it('admits while a slot is free, and says the slots hold it once they are all taken', () => {
    const { policy } = policyOf()
    expect(admitted(policy.admit())).toEqual({ kind: 'attempt' })
    expect(admitted(policy.admit())).toEqual({ kind: 'attempt' })
    expect(policy.hasSlot).toBe(false)
    expect(admitted(policy.admit())).toEqual({ kind: 'wait', held: 'slots' })
    policy.answered('attempt', answer(200))
    expect(policy.inFlight).toBe(1)
    expect(admitted(policy.admit())).toEqual({ kind: 'attempt' })
  })

  it('opens its breaker on an answer that counts, holds deliveries until the cool-down ends, then lets one probe through', () => {
    const { policy, clock, states } = policyOf()
    admitted(policy.admit())
    policy.answered('attempt', broken('tls'))
    expect(policy.circuit).toBe('open')
    // What opened it, as a URL that ends held is said to have failed with.
    const openedBy = { code: 'ERR_TLS_CERTIFICATE', cause: new Error('tls') }
    expect(admitted(policy.admit())).toEqual({ kind: 'wait', held: 'breaker', until: 2_000, openedBy })
    clock.now = 2_000
    expect(admitted(policy.admit())).toEqual({ kind: 'probe' })
    // The probe is out: others wait for at most a cool-down, and no longer than an attempt takes.
    expect(admitted(policy.admit())).toEqual({ kind: 'wait', held: 'breaker', until: 3_000, openedBy })
    policy.answered('probe', answer(204))
    expect(states).toEqual(['open', 'half-open', 'closed'])
    expect(policy.inFlight).toBe(0)
  })

  it('counts nothing against the URL for an answer nobody wanted, nor for a blocked address', () => {
    const { policy, states } = policyOf()
    admitted(policy.admit())
    policy.answered('attempt', answer(503), false)
    admitted(policy.admit())
    policy.answered('attempt', broken('blocked'))
    expect(states).toEqual([])
  })

  it('checks the breaker first, then the slots, then the rate: a rate that says wait gives back the slot and the probe', () => {
    // One delivery every 2 s.
    const { policy, clock } = policyOf({ rate: new TokenBucket(0.5, 1_000) })
    expect(admitted(policy.admit())).toEqual({ kind: 'attempt' })
    expect(admitted(policy.admit())).toEqual({ kind: 'wait', held: 'rate', waitMs: 2_000 })
    expect(policy.inFlight).toBe(1)
    policy.answered('attempt', answer(500))
    // Open: the breaker answers before the rate is asked.
    expect(admitted(policy.admit())).toEqual({
      kind: 'wait',
      held: 'breaker',
      until: 2_000,
      openedBy: { code: 'ERR_HTTP_STATUS', status: 500 },
    })
    clock.now = 2_000
    // Half-open with no token yet: the probe goes back with the slot...
    expect(admitted(policy.admit())).toEqual({ kind: 'wait', held: 'rate', waitMs: 1_000 })
    expect(policy.inFlight).toBe(0)
    clock.now = 3_000
    // ...and the next delivery is the probe.
    expect(admitted(policy.admit())).toEqual({ kind: 'probe' })
  })

  it('gives back what an unused permit took: its slot, its probe and its token', () => {
    const { policy, clock } = policyOf({ slots: 1, rate: new TokenBucket(1, 1_000) })
    const first = admitted(policy.admit())
    expect(first).toEqual({ kind: 'attempt' })
    policy.unused('attempt')
    expect(policy.inFlight).toBe(0)
    // The token came back too.
    expect(admitted(policy.admit())).toEqual({ kind: 'attempt' })
    policy.answered('attempt', answer(502))
    clock.now = 3_000
    expect(admitted(policy.admit())).toEqual({ kind: 'probe' })
    policy.unused('probe')
    expect(admitted(policy.admit())).toEqual({ kind: 'probe' })
  })

  it('hands a freed slot to whoever waits for one, and admits a delivery that was handed one', async () => {
    let waiting: ((handed: boolean) => void) | undefined
    let handOver = () => false
    const { policy } = policyOf({ slots: 1, handOver: () => handOver() })
    admitted(policy.admit())
    const later = policy.admit(
      () =>
        new Promise<boolean>((resolve) => {
          waiting = resolve
        }),
    )
    handOver = () => {
      waiting?.(true)
      return true
    }
    policy.answered('attempt', answer(200))
    // Still counted: the slot went straight to the waiting delivery.
    expect(policy.inFlight).toBe(1)
    expect(await later).toEqual({ kind: 'attempt' })
  })

  it('holds a delivery that was handed a slot while the breaker opened, and frees the slot', async () => {
    let release: ((handed: boolean) => void) | undefined
    const { policy } = policyOf({
      slots: 1,
      handOver: () => {
        const waiting = release
        release = undefined
        waiting?.(true)
        return waiting !== undefined
      },
    })
    admitted(policy.admit())
    const later = policy.admit(
      () =>
        new Promise<boolean>((resolve) => {
          release = resolve
        }),
    )
    policy.answered('attempt', answer(503))
    expect(await later).toEqual({
      kind: 'wait',
      held: 'breaker',
      until: 2_000,
      openedBy: { code: 'ERR_HTTP_STATUS', status: 503 },
    })
    expect(policy.inFlight).toBe(0)
  })

  it('follows a shared breaker: waits for its first reading, and asks the others before it probes', async () => {
    const told: string[] = []
    let remote: number | undefined | typeof UNREAD = UNREAD
    let claim = { claimed: false, openUntil: 9_000 as number | undefined }
    const shared: SharedCircuit = {
      known: () => remote,
      read: async () => {
        remote = 1_500
        return remote
      },
      claimProbe: async () => claim,
      open: (_url, coolDownMs, openedBy) => told.push(`open ${coolDownMs} ${JSON.stringify(openedBy)}`),
      close: () => told.push('close'),
      openedBy: () => remoteCause,
    }
    let remoteCause: AttemptFailure | undefined = { code: 'ERR_NETWORK', cause: new Error('ECONNREFUSED') }
    const { policy, clock, states } = policyOf({ shared })
    const first = policy.admit()
    expect(first).toBeInstanceOf(Promise)
    // Another process opened it: what opened it is the other's, as read.
    expect(await first).toEqual({ kind: 'wait', held: 'breaker', until: 1_500, openedBy: remoteCause })
    clock.now = 1_500
    remoteCause = undefined
    // Another worker's probe failed and opened it again: followed, not shared back.
    expect(await policy.admit()).toEqual({ kind: 'wait', held: 'breaker', until: 9_000, openedBy: undefined })
    clock.now = 9_000
    remote = 9_000
    claim = { claimed: true, openUntil: undefined }
    expect(await policy.admit()).toEqual({ kind: 'probe' })
    policy.answered('probe', answer(500))
    // Shared with what opened it.
    expect(told).toEqual(['open 1000 {"code":"ERR_HTTP_STATUS","status":500}'])
    expect(states).toEqual(['open', 'half-open', 'open', 'half-open', 'open'])
  })
})
