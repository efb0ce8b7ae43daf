// A worker process's slots and breaker per URL, on a clock the test moves: what is admitted, what
// waits for a slot and for how long, and what is sent back to Redis for later.
import { describe, expect, it, vi } from 'vitest'
import { BREAKER_DEFAULTS, type CircuitState } from '../../src/webhook/delivery/circuit-breaker.js'
import {
  LANE_WAIT_MS,
  RETURN_HORIZON_MS,
  WorkerLanes,
  type WorkerLaneRules,
} from '../../src/webhook/bullmq/worker-lanes.js'
import type { Admission } from '../../src/webhook/delivery/url-round.js'
import { UNREAD } from '../../src/webhook/delivery/url-policy.js'
import type { WebhookResponse } from '../../src/webhook/network/transport.js'

function lanesOf(rules: Partial<WorkerLaneRules> = {}, clock = { now: 1_000_000 }) {
  const states: CircuitState[] = []
  const lanes = new WorkerLanes({
    slotsPerUrl: 2,
    timeoutMs: 5_000,
    breaker: undefined,
    circuit: (_url, state) => states.push(state),
    now: () => clock.now,
    random: () => 0,
    ...rules,
  })
  return { lanes, clock, states }
}

type Sent = Extract<Admission, { kind: 'attempt' | 'probe' }> & { done(failed: boolean): void }
const answer = (status: number): WebhookResponse => ({ ok: true, status, retryAfter: null })
/** An admission to send, with `done`: answered by a 503 (failed) or a 200. */
/** What opened a breaker that `done(true)` opened (a 503 at URL `a`), as a held job is told. */
const OPENED_BY_503 = {
  status: 503,
  cause: expect.objectContaining({ name: 'WebhookError', code: 'ERR_HTTP_STATUS', message: 'a answered HTTP 503.' }),
}

const sent = (admission: Admission): Sent => {
  if (admission.kind === 'wait') throw new Error(`expected to be sent, got a wait until ${admission.until}`)
  return { ...admission, done: (failed) => admission.answered(answer(failed ? 503 : 200), true) }
}

describe('WorkerLanes', () => {
  it('forgets URLs that hold nothing once it has met many: a busy one, an open breaker, an admission waiting for Redis and a paced return stay', async () => {
    let release = (_: number | undefined) => {}
    const shared = {
      known: (url: string) => (url === 'unread' ? UNREAD : undefined),
      read: () => new Promise<number | undefined>((resolve) => (release = resolve)),
      claimProbe: async () => ({ claimed: true }),
      open: () => {},
      close: () => {},
      openedBy: () => undefined,
    }
    const { lanes, clock } = lanesOf({
      slotsPerUrl: 1,
      shared,
      breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 60_000 },
    })
    const busy = sent(await lanes.admit('busy'))
    sent(await lanes.admit('broken')).done(true)
    const unread = lanes.admit('unread')
    const lasting = sent(await lanes.admit('paced'))
    // Its slot taken by an attempt that lasts: the next job leaves, and its return is paced, after the attempt ends too.
    clock.now += 1_000
    expect((await lanes.admit('paced')).kind).toBe('wait')
    lasting.done(false)
    for (let index = 0; index < 1_020; index++) sent(await lanes.admit(`quiet-${index}`)).done(false)
    expect(lanes.size).toBe(1_024)
    sent(await lanes.admit('one-more'))
    expect(lanes.size).toBe(5)
    expect(lanes.backlog(['busy', 'broken']).map((url) => [url.inFlight, url.circuit])).toEqual([
      [1, 'closed'],
      [0, 'open'],
    ])
    release(undefined)
    expect((await unread).kind).toBe('attempt')
    busy.done(false)
  })

  it('admits up to slotsPerUrl attempts per URL, each URL on its own', async () => {
    const { lanes } = lanesOf()
    expect((await lanes.admit('a')).kind).toBe('attempt')
    expect((await lanes.admit('a')).kind).toBe('attempt')
    expect((await lanes.admit('b')).kind).toBe('attempt')
  })

  it('hands a freed slot to a job waiting for it, when the URL answers quickly', async () => {
    const { lanes } = lanesOf()
    const first = sent(await lanes.admit('a'))
    sent(await lanes.admit('a'))
    const third = lanes.admit('a')
    first.done(false)
    expect((await third).kind).toBe('attempt')
    // The slot went to the waiter: the lane is full again.
    vi.useFakeTimers()
    try {
      const fourth = lanes.admit('a')
      vi.advanceTimersByTime(LANE_WAIT_MS)
      expect((await fourth).kind).toBe('wait')
    } finally {
      vi.useRealTimers()
    }
  })

  it('gives a slot freed after a job stopped waiting for it to nobody: the slot is free for the next job', async () => {
    const { lanes } = lanesOf({ slotsPerUrl: 1 })
    vi.useFakeTimers()
    try {
      const first = sent(await lanes.admit('a'))
      const gaveUp = lanes.admit('a')
      vi.advanceTimersByTime(LANE_WAIT_MS)
      expect((await gaveUp).kind).toBe('wait')
      first.done(false)
      expect(lanes.backlog(['a'])).toEqual([{ url: 'a', inFlight: 0, slots: 1, waiting: 0, circuit: 'closed' }])
      expect(lanes.admitNow('a')).toMatchObject({ kind: 'attempt' })
    } finally {
      vi.useRealTimers()
    }
  })

  it('does not wait for a slot of a URL whose attempts last: the job leaves it for about as long as they take', async () => {
    const { lanes, clock } = lanesOf()
    sent(await lanes.admit('a'))
    sent(await lanes.admit('a'))
    clock.now += 1_500
    const wait = await lanes.admit('a')
    expect(wait).toEqual({ kind: 'wait', until: clock.now + 1_500, breaker: false })
  })

  it('never leaves a URL for longer than a timeout, nor for less than the wait for a slot', async () => {
    const { lanes, clock } = lanesOf({ timeoutMs: 1_000 })
    sent(await lanes.admit('a'))
    sent(await lanes.admit('a'))
    clock.now += 60_000
    expect(await lanes.admit('a')).toEqual({ kind: 'wait', until: clock.now + 1_000, breaker: false })
    const quick = lanesOf()
    const done = sent(await quick.lanes.admit('a'))
    quick.clock.now += 150
    done.done(false)
    sent(await quick.lanes.admit('a'))
    sent(await quick.lanes.admit('a'))
    quick.clock.now += 101
    // Its attempts took 150 ms: past the wait for a slot, so it is left that long at once.
    expect(await quick.lanes.admit('a')).toEqual({ kind: 'wait', until: quick.clock.now + 150, breaker: false })
  })

  it('brings jobs left by a busy URL back in turn, at the pace its slots free up', async () => {
    const { lanes, clock } = lanesOf()
    sent(await lanes.admit('a'))
    sent(await lanes.admit('a'))
    clock.now += 1_000
    // Attempts take 1 s and the URL has 2 slots: one job every 500 ms.
    expect(await lanes.admit('a')).toEqual({ kind: 'wait', until: clock.now + 1_000, breaker: false })
    expect(await lanes.admit('a')).toEqual({ kind: 'wait', until: clock.now + 1_500, breaker: false })
    expect(await lanes.admit('a')).toEqual({ kind: 'wait', until: clock.now + 2_000, breaker: false })
  })

  it('brings jobs beyond the horizon back at the horizon, spread over one attempt', async () => {
    const { lanes, clock } = lanesOf({ slotsPerUrl: 1, timeoutMs: 5_000, random: () => 0.5 })
    sent(await lanes.admit('a'))
    clock.now += 5_000
    const returns: number[] = []
    for (let job = 0; job < 14; job++) {
      const wait = await lanes.admit('a')
      if (wait.kind === 'wait') returns.push(wait.until - clock.now)
    }
    expect(returns.slice(0, 12)).toEqual(Array.from({ length: 12 }, (_, turn) => 5_000 * (turn + 1)))
    expect(returns.slice(12)).toEqual([RETURN_HORIZON_MS + 2_500, RETURN_HORIZON_MS + 2_500])
  })

  it('opens the breaker after a run of failures: jobs wait for the cool-down, then one probe goes', async () => {
    const { lanes, clock, states } = lanesOf({
      slotsPerUrl: 10,
      breaker: { ...BREAKER_DEFAULTS, failures: 3, coolDownMs: 2_000 },
    })
    for (let failure = 0; failure < 3; failure++) sent(await lanes.admit('a')).done(true)
    expect(states).toEqual(['open'])
    // What opened it, as the error a dead letter names beside ERR_CIRCUIT_OPEN.
    const openedBy = OPENED_BY_503
    expect(await lanes.admit('a')).toEqual({ kind: 'wait', until: clock.now + 2_000, breaker: true, openedBy })
    clock.now += 2_000
    const probe = sent(await lanes.admit('a'))
    expect(probe.kind).toBe('probe')
    // The probe is out: others wait a cool-down at most, not a timeout.
    expect(await lanes.admit('a')).toEqual({ kind: 'wait', until: clock.now + 2_000, breaker: true, openedBy })
    probe.done(false)
    expect(states).toEqual(['open', 'half-open', 'closed'])
    expect((await lanes.admit('a')).kind).toBe('attempt')
  })

  it('holds back a job that waited for a slot while the breaker opened: the slot goes unused', async () => {
    const { lanes, clock } = lanesOf({
      slotsPerUrl: 1,
      breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 },
    })
    const straggler = sent(await lanes.admit('a'))
    const waiting = lanes.admit('a')
    straggler.done(true)
    expect(await waiting).toMatchObject({ kind: 'wait', breaker: true })
    // The slot it was handed is free again: after the cool-down the probe finds it.
    clock.now += 1_000
    expect((await lanes.admit('a')).kind).toBe('probe')
  })

  it('gives back a probe it could not send because the URL had no slot free', async () => {
    let remote: number | undefined
    const shared = {
      known: () => remote,
      read: async () => remote,
      claimProbe: async () => ({ claimed: true }),
      open: () => undefined,
      close: () => undefined,
      openedBy: () => undefined,
    } as unknown as WorkerLaneRules['shared']
    const { lanes, clock } = lanesOf({
      slotsPerUrl: 1,
      breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 },
      shared,
    })
    const holding = sent(await lanes.admit('a'))
    // Another worker opened the URL's breaker while this one's attempt is out.
    remote = clock.now + 1_000
    expect(await lanes.admit('a')).toMatchObject({ kind: 'wait', breaker: true })
    clock.now += 1_000
    // Half-open, but the one slot is taken: the probe is given back, not lost.
    expect(await lanes.admit('a')).toMatchObject({ kind: 'wait', breaker: false })
    holding.done(true)
    expect((await lanes.admit('a')).kind).toBe('probe')
  })

  it('counts nothing against a URL whose attempt it never sent, nor for it: its slot and its probe go back', async () => {
    const { lanes, clock, states } = lanesOf({
      slotsPerUrl: 1,
      breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 },
    })
    sent(await lanes.admit('a')).unused()
    expect(states).toEqual([])
    sent(await lanes.admit('a')).done(true)
    clock.now += 1_000
    sent(await lanes.admit('a')).unused()
    // The probe was given back, unsent: the breaker is still half-open, and the next one probes.
    expect(states).toEqual(['open', 'half-open'])
    expect((await lanes.admit('a')).kind).toBe('probe')
  })

  it('hears nothing against a URL from an answer nobody wanted any more', async () => {
    const { lanes, states } = lanesOf({ breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 } })
    sent(await lanes.admit('a')).answered(answer(503), false)
    expect(states).toEqual([])
    expect(lanes.backlog(['a'])[0]?.inFlight).toBe(0)
  })
})

describe('WorkerLanes.admitNow', () => {
  it('answers at once with a free slot and a closed breaker, or an open one, and with a promise while it waits for a slot', async () => {
    const { lanes } = lanesOf({ slotsPerUrl: 1, breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 } })
    const first = lanes.admitNow('a')
    expect(first).not.toBeInstanceOf(Promise)
    // The one slot is taken: it waits for it, as admit() does.
    const second = lanes.admitNow('a')
    expect(second).toBeInstanceOf(Promise)
    sent(first as Admission).done(true)
    // The failure opened the breaker; the waiting job is handed the slot and held by the breaker.
    expect(await second).toMatchObject({ kind: 'wait', breaker: true })
    expect(lanes.admitNow('a')).toMatchObject({ kind: 'wait', breaker: true })
  })

  it("follows the other workers' breaker as last read, and waits for the first reading", async () => {
    let remote: number | undefined
    let read = false
    const shared = {
      known: () => (read ? remote : UNREAD),
      read: async () => {
        read = true
        return remote
      },
      open: () => undefined,
      close: () => undefined,
      openedBy: () => undefined,
    } as unknown as WorkerLaneRules['shared']
    const { lanes, clock, states } = lanesOf({
      breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 },
      shared,
    })
    const first = lanes.admitNow('a')
    expect(first).toBeInstanceOf(Promise)
    sent(await first).done(false)
    expect(lanes.admitNow('a')).not.toBeInstanceOf(Promise)
    remote = clock.now + 1_000
    expect(await lanes.admitNow('a')).toMatchObject({ kind: 'wait', breaker: true })
    expect(states).toEqual(['open'])
  })
})

describe('WorkerLanes.backlog', () => {
  it("shows each URL's attempts in flight, its slots, the jobs waiting for a slot and its breaker", async () => {
    const { lanes } = lanesOf({ breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 } })
    sent(await lanes.admit('a'))
    const failing = sent(await lanes.admit('a'))
    const waiting = lanes.admit('a')
    expect(lanes.backlog(['a', 'b'])).toEqual([
      { url: 'a', inFlight: 2, slots: 2, waiting: 1, circuit: 'closed' },
      { url: 'b', inFlight: 0, slots: 2, waiting: 0, circuit: 'closed' },
    ])
    failing.done(true)
    await waiting
    expect(lanes.backlog(['a'])).toEqual([{ url: 'a', inFlight: 1, slots: 2, waiting: 0, circuit: 'open' }])
  })
})

describe('WorkerLanes, the rest of their contract', () => {
  /** A stand-in for the breakers shared through Redis, recording what it is told. */
  function sharedOf(claims: Array<{ claimed: boolean; openUntil?: number }> = [], clock = { now: 1_000_000 }) {
    const told: string[] = []
    /** What Redis holds: as SharedBreakers does, it remembers what it wrote and what a claim read. */
    let remote: number | undefined
    const shared = {
      known: () => remote,
      read: async () => remote,
      claimProbe: async () => {
        const claim = claims.shift() ?? { claimed: true }
        if (claim.openUntil !== undefined) remote = claim.openUntil
        return claim
      },
      open: (_url: string, coolDownMs: number) => {
        remote = clock.now + coolDownMs
        told.push(`open for ${coolDownMs}`)
      },
      close: () => {
        remote = undefined
        told.push('close')
      },
      openedBy: () => undefined,
    } as unknown as NonNullable<WorkerLaneRules['shared']>
    return { shared, told }
  }

  it('does not probe when another worker holds the probe, and follows an opening another worker wrote', async () => {
    const clock = { now: 1_000_000 }
    const { shared } = sharedOf([{ claimed: false }, { claimed: false, openUntil: 1_005_000 }], clock)
    const { lanes, states } = lanesOf(
      { breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 }, shared },
      clock,
    )
    sent(await lanes.admit('a')).done(true)
    clock.now += 1_000
    // Another worker probes: held for a cool-down at most.
    expect(await lanes.admit('a')).toEqual({
      kind: 'wait',
      until: clock.now + 1_000,
      breaker: true,
      openedBy: OPENED_BY_503,
    })
    // Another worker's probe failed: open until when it says.
    expect(await lanes.admit('a')).toEqual({ kind: 'wait', until: 1_005_000, breaker: true, openedBy: OPENED_BY_503 })
    expect(states).toEqual(['open', 'half-open', 'open'])
    clock.now = 1_005_000
    expect((await lanes.admit('a')).kind).toBe('probe')
  })

  it('tells the shared breakers of its own openings and closings only', async () => {
    const clock = { now: 1_000_000 }
    const { shared, told } = sharedOf([], clock)
    const { lanes } = lanesOf({ breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 }, shared }, clock)
    sent(await lanes.admit('a')).done(true)
    expect(told).toEqual(['open for 1000'])
    clock.now += 1_000
    const probe = sent(await lanes.admit('a'))
    expect(told).toHaveLength(1)
    probe.done(false)
    expect(told).toEqual(['open for 1000', 'close'])
  })

  it('sends a probe that waited for a slot, though the breaker is not closed', async () => {
    let remote: number | undefined
    const shared = { ...sharedOf().shared, known: () => remote, read: async () => remote } as unknown as NonNullable<
      WorkerLaneRules['shared']
    >
    const { lanes, clock } = lanesOf({
      slotsPerUrl: 1,
      breaker: { ...BREAKER_DEFAULTS, failures: 5, coolDownMs: 1_000 },
      shared,
    })
    const holding = sent(await lanes.admit('a'))
    remote = clock.now + 50
    expect(await lanes.admit('a')).toMatchObject({ kind: 'wait', breaker: true })
    clock.now += 50
    // Half-open: the probe waits for the slot (the attempt out is young), and gets it.
    const probe = lanes.admit('a')
    await expect.poll(() => lanes.backlog(['a'])[0]?.waiting).toBe(1)
    holding.done(true)
    expect((await probe).kind).toBe('probe')
  })

  it('holds a job back for at least the wait for a slot, though the cool-down is 0 and the probe is out', async () => {
    const { lanes, clock } = lanesOf({ breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 0 } })
    sent(await lanes.admit('a')).done(true)
    // Cool-down over at once: this one probes; the next is held while it is out, not sent straight back.
    expect((await lanes.admit('a')).kind).toBe('probe')
    expect(await lanes.admit('a')).toEqual({
      kind: 'wait',
      until: clock.now + LANE_WAIT_MS,
      breaker: true,
      openedBy: OPENED_BY_503,
    })
  })

  it('holds a job for what is left of an open cool-down, spread by up to as much again', async () => {
    const { lanes, clock } = lanesOf({
      breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 2_000 },
      random: () => 0.5,
    })
    sent(await lanes.admit('a')).done(true)
    clock.now += 500
    expect(await lanes.admit('a')).toEqual({
      kind: 'wait',
      until: clock.now + 2_250,
      breaker: true,
      openedBy: OPENED_BY_503,
    })
  })

  it('waits for a slot when the attempts out take exactly the wait for a slot, and not a moment more', async () => {
    const { lanes, clock } = lanesOf({ slotsPerUrl: 1 })
    const holding = sent(await lanes.admit('a'))
    clock.now += LANE_WAIT_MS
    const waiting = lanes.admit('a')
    holding.done(false)
    expect((await waiting).kind).toBe('attempt')
    vi.useFakeTimers()
    try {
      clock.now += LANE_WAIT_MS + 1
      let settled = false
      const left = lanes.admit('a').then((admission) => {
        settled = true
        return admission
      })
      // Left at once, without waiting for a timer.
      await vi.advanceTimersByTimeAsync(0)
      expect(settled).toBe(true)
      expect((await left).kind).toBe('wait')
    } finally {
      vi.useRealTimers()
    }
  })

  it('learns how long attempts take as a moving average, and leaves jobs for about that long', async () => {
    const { lanes, clock } = lanesOf({ slotsPerUrl: 1 })
    const first = sent(await lanes.admit('a'))
    clock.now += 1_000
    first.done(false)
    const second = sent(await lanes.admit('a'))
    clock.now += 500
    second.done(false)
    sent(await lanes.admit('a'))
    // 1,000 then 500 ms: 0.8 x 1,000 + 0.2 x 500.
    expect(await lanes.admit('a')).toEqual({ kind: 'wait', until: clock.now + 900, breaker: false })
  })

  it('keeps ratePerUrl: over the rate, the slot goes on and jobs come back in turn, one interval apart', async () => {
    const waits = [300, 300]
    const rates = { take: async () => waits.shift() ?? 0, interval: 200 }
    const clock = { now: 1_000_000 }
    const { shared } = sharedOf([], clock)
    const { lanes } = lanesOf(
      { rates, breaker: { ...BREAKER_DEFAULTS, failures: 1, coolDownMs: 1_000 }, shared },
      clock,
    )
    expect(await lanes.admit('a')).toEqual({ kind: 'wait', until: clock.now + 300, breaker: false })
    expect(await lanes.admit('a')).toEqual({ kind: 'wait', until: clock.now + 500, breaker: false })
    expect(lanes.backlog(['a'])).toEqual([{ url: 'a', inFlight: 0, slots: 2, waiting: 0, circuit: 'closed' }])
    // Within the rate: sent.
    sent(await lanes.admit('a')).done(true)
    clock.now += 1_000
    // A probe over the rate is given back for the next one.
    waits.push(100)
    expect(await lanes.admit('a')).toMatchObject({ kind: 'wait', breaker: false })
    expect((await lanes.admit('a')).kind).toBe('probe')
  })
})
