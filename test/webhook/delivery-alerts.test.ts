// DeliveryAlerts apart from Redis: which outcomes of a round raise which stage, what is asked of
// Redis and when not (the worker's memory of a URL's stage), what is told for each answer, and
// autoDisable. The scripts themselves run against a real Redis in alerts.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  ALERT_MEMORY_MS,
  DeliveryAlerts,
  MAX_REMEMBERED_PAIRS,
  resolveAlerts,
  type AlertStore,
  type DeliveryAlert,
  type ResolvedAlerts,
} from '../../src/webhook/bullmq/delivery-alerts.js'
import { destinationKey } from '../../src/webhook/bullmq/registry.js'
import type { AttemptFailure } from '../../src/webhook/delivery/failure.js'
import type { DeliveryState, TargetState } from '../../src/webhook/delivery/state.js'
import type { Endpoint } from '../../src/webhook/network/endpoint.js'

const WINDOW = 1_000
const URL_A = 'https://a.example/in'
const URL_B = 'https://b.example/in'

afterEach(() => {
  vi.restoreAllMocks()
})

/** A store that records each command and answers as told. */
function fakeStore(answers: { raise?: [number, number]; clear?: number; fail?: Error } = {}) {
  const calls: Array<{ command: string; args: unknown[] }> = []
  const defined: string[] = []
  const store = {
    defineCommand(name: string) {
      defined.push(name)
      ;(store as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
        calls.push({ command: name, args })
        if (answers.fail !== undefined) throw answers.fail
        return name === 'eventwireRaiseAlert' ? (answers.raise ?? [1, 0]) : (answers.clear ?? 0)
      }
    },
  } as unknown as AlertStore
  return { store, calls, defined }
}

/** A round of `acme`, whose URLs are A and B, that ends an event's window at A. */
function givesUpAtA(alerts: DeliveryAlerts): void {
  alerts.afterRound('acme', [endpointOf(URL_A), endpointOf(URL_B)], state(target(URL_A, { status: 'failed' })), WINDOW)
}

function alertsWith(
  store: AlertStore,
  settings: Partial<ResolvedAlerts> = {},
  disable: (id: string) => Promise<boolean> = async () => true,
  retryWindowMs = WINDOW,
) {
  const told: DeliveryAlert[] = []
  const failures: Error[] = []
  const disabled: string[] = []
  const alerts = new DeliveryAlerts(
    'bull:q',
    { shares: [0.25, 0.5, 0.75], autoDisable: false, ...settings },
    retryWindowMs,
    async () => store,
    {
      alert: (alert) => told.push(alert),
      disable: async (id) => {
        disabled.push(id)
        return disable(id)
      },
      failed: (error) => failures.push(error),
    },
  )
  return { alerts, told, failures, disabled }
}

const endpointOf = (url: string) => ({ url, timeoutMs: 5_000 }) as Endpoint

function target(url: string, over: Partial<TargetState<Endpoint>> = {}): TargetState<Endpoint> {
  return {
    endpoint: endpointOf(url),
    status: 'pending',
    attempts: 1,
    lastStatus: 503,
    failure: { code: 'ERR_HTTP_STATUS', status: 503 },
    retryAfterMs: undefined,
    ...over,
  }
}

/** A state whose window started at 0: at `now`, it has failed for `now` ms. */
function state(...targets: TargetState<Endpoint>[]): DeliveryState<Endpoint> {
  return { eventId: 'e1', deadline: WINDOW, rounds: 1, targets }
}

describe('DeliveryAlerts', () => {
  it('raises the highest share an event has failed for, from its exact millisecond, and tells it once raised', async () => {
    const { store, calls } = fakeStore()
    const { alerts, told } = alertsWith(store)
    alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A)), 249)
    await alerts.settled()
    expect(calls).toEqual([])
    alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A)), 250)
    await alerts.settled()
    expect(calls).toEqual([{ command: 'eventwireRaiseAlert', args: ['bull:q:alerts:acme', URL_A, 1, 2 * WINDOW] }])
    expect(told).toEqual([
      {
        kind: 'failing',
        destination: 'acme',
        url: URL_A,
        share: 0.25,
        failingForMs: 250,
        error: expect.objectContaining({ code: 'ERR_HTTP_STATUS', status: 503 }),
      },
    ])
    alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A)), 760)
    await alerts.settled()
    expect(calls.at(-1)?.args).toEqual(['bull:q:alerts:acme', URL_A, 3, 2 * WINDOW])
    expect(told.at(-1)).toMatchObject({ kind: 'failing', share: 0.75, failingForMs: 760 })
  })

  it('tells nothing when another worker raised the stage first', async () => {
    const { store, calls } = fakeStore({ raise: [0, 0] })
    const { alerts, told } = alertsWith(store)
    alerts.afterRound(undefined, [endpointOf(URL_A)], state(target(URL_A)), 500)
    await alerts.settled()
    expect(calls[0]?.args).toEqual(['bull:q:alerts', URL_A, 2, 2 * WINDOW])
    expect(told).toEqual([])
  })

  it.each<[string, Partial<TargetState<Endpoint>>, boolean]>([
    ['a timeout', { failure: { code: 'ERR_TIMEOUT' } }, true],
    ['a network error', { failure: { code: 'ERR_NETWORK' } }, true],
    ['an open breaker', { failure: { code: 'ERR_CIRCUIT_OPEN' } }, true],
    ['a 503', { failure: { code: 'ERR_HTTP_STATUS', status: 503 } }, true],
    ['a 429', { failure: { code: 'ERR_HTTP_STATUS', status: 429 } }, true],
    ['a 400', { failure: { code: 'ERR_HTTP_STATUS', status: 400 } }, false],
    ['a status-less HTTP failure', { failure: { code: 'ERR_HTTP_STATUS' } }, false],
    ['an untrusted certificate', { failure: { code: 'ERR_TLS_CERTIFICATE' } as AttemptFailure }, false],
    // Retried, but the egress proxy's: a proxy that is down says nothing of the URLs behind it.
    ['the egress proxy’s failure', { failure: { code: 'ERR_PROXY' } as AttemptFailure }, false],
    ['a hold by the breaker before any attempt', { failure: undefined, held: 'breaker', attempts: 0 }, true],
    ['a hold for slots before any attempt', { failure: undefined, held: 'slots', attempts: 0 }, false],
  ])('counts %s as the URL failing: %s', async (_case, over, counts) => {
    const { store, calls } = fakeStore()
    const { alerts, told } = alertsWith(store)
    alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A, over)), 300)
    await alerts.settled()
    expect(calls.length).toBe(counts ? 1 : 0)
    if (counts && over.failure === undefined) expect(told[0]).not.toHaveProperty('error')
  })

  it('gives up a URL whose event failed once its window is spent, not before, and not a settled or superseded one', async () => {
    const { store, calls } = fakeStore()
    const { alerts, told } = alertsWith(store)
    alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A, { status: 'failed' })), WINDOW - 1)
    alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A, { status: 'superseded' })), WINDOW)
    await alerts.settled()
    expect(calls).toEqual([])
    alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A, { status: 'failed' })), WINDOW)
    await alerts.settled()
    // Without autoDisable, nothing asks whether every URL gave up.
    expect(calls).toEqual([{ command: 'eventwireRaiseAlert', args: ['bull:q:alerts:acme', URL_A, 4, 2 * WINDOW] }])
    expect(told).toEqual([
      { kind: 'given-up', destination: 'acme', url: URL_A, failingForMs: WINDOW, error: expect.anything() },
    ])
  })

  it('with autoDisable, asks whether every URL of the destination gave up, and disables it when so', async () => {
    const { store, calls } = fakeStore({ raise: [1, 1] })
    const { alerts, told, disabled } = alertsWith(store, { autoDisable: true })
    givesUpAtA(alerts)
    await alerts.settled()
    expect(calls[0]?.args).toEqual(['bull:q:alerts:acme', URL_A, 4, 2 * WINDOW, URL_A, URL_B])
    expect(disabled).toEqual(['acme'])
    expect(told.map((alert) => alert.kind)).toEqual(['given-up', 'disabled'])
    expect(told[1]).toEqual({ kind: 'disabled', destination: 'acme' })
  })

  it('tells no disabling when the destination was disabled already, and never asks for the workers’ own webhooks', async () => {
    const { store, calls } = fakeStore({ raise: [1, 1] })
    const { alerts, told, disabled } = alertsWith(store, { autoDisable: true }, async () => false)
    alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A, { status: 'failed' })), WINDOW)
    alerts.afterRound(undefined, [endpointOf(URL_B)], state(target(URL_B, { status: 'failed' })), WINDOW)
    await alerts.settled()
    expect(disabled).toEqual(['acme'])
    expect(told.map((alert) => alert.kind)).toEqual(['given-up', 'given-up'])
    expect(calls[1]?.args).toEqual(['bull:q:alerts', URL_B, 4, 2 * WINDOW])
  })

  it('does not disable when some URL of the destination has not given up', async () => {
    const { store } = fakeStore({ raise: [1, 0] })
    const { alerts, disabled } = alertsWith(store, { autoDisable: true })
    givesUpAtA(alerts)
    await alerts.settled()
    expect(disabled).toEqual([])
  })

  it.each([
    ['a minute, with a retry window of an hour', 3_600_000, ALERT_MEMORY_MS],
    ['two retry windows, when that is shorter: as long as Redis keeps the stage', WINDOW, 2 * WINDOW],
  ])('asks Redis at most once per %s for a stage it knows of, per destination and URL', async (_, window, memoryMs) => {
    let now = 1_000_000
    vi.spyOn(performance, 'now').mockImplementation(() => now)
    const { store, calls } = fakeStore()
    const { alerts } = alertsWith(store, {}, undefined, window)
    const failing = (id: string) =>
      alerts.afterRound(id, [endpointOf(URL_A)], { ...state(target(URL_A)), deadline: window }, window * 0.3)
    failing('acme')
    failing('acme')
    failing('beta')
    await alerts.settled()
    expect(calls.map((call) => call.args[0])).toEqual(['bull:q:alerts:acme', 'bull:q:alerts:beta'])
    now += memoryMs - 1
    failing('acme')
    await alerts.settled()
    expect(calls).toHaveLength(2)
    now += 1
    failing('acme')
    await alerts.settled()
    expect(calls).toHaveLength(3)
  })

  it(`remembers at most ${MAX_REMEMBERED_PAIRS} pairs, forgetting the oldest first`, async () => {
    const { store, calls } = fakeStore()
    const { alerts } = alertsWith(store)
    for (let i = 0; i <= MAX_REMEMBERED_PAIRS; i++)
      alerts.afterRound(`d${i}`, [endpointOf(URL_A)], state(target(URL_A)), 300)
    await alerts.settled()
    expect(calls).toHaveLength(MAX_REMEMBERED_PAIRS + 1)
    // d1 is still remembered; d0 was forgotten when the last came in.
    alerts.afterRound('d1', [endpointOf(URL_A)], state(target(URL_A)), 300)
    alerts.afterRound(`d${MAX_REMEMBERED_PAIRS}`, [endpointOf(URL_A)], state(target(URL_A)), 300)
    await alerts.settled()
    expect(calls).toHaveLength(MAX_REMEMBERED_PAIRS + 1)
    alerts.afterRound('d0', [endpointOf(URL_A)], state(target(URL_A)), 300)
    await alerts.settled()
    expect(calls).toHaveLength(MAX_REMEMBERED_PAIRS + 2)
  })

  it('clears a URL that took an event after failing it, or once known to have a stage, and tells it back only when it had one', async () => {
    let now = 1_000_000
    vi.spyOn(performance, 'now').mockImplementation(() => now)
    const quiet = fakeStore({ clear: 0 })
    const first = alertsWith(quiet.store)
    // Taken at the first attempt, nothing known: Redis is not asked.
    first.alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A, { status: 'delivered', attempts: 1 })), 10)
    await first.alerts.settled()
    expect(quiet.calls).toEqual([])
    // Taken after a failure: asked; it had no stage, so nothing is told.
    first.alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A, { status: 'delivered', attempts: 2 })), 10)
    await first.alerts.settled()
    expect(quiet.calls).toEqual([{ command: 'eventwireClearAlert', args: ['bull:q:alerts:acme', URL_A] }])
    expect(first.told).toEqual([])
    // Asked once a minute at most, until a failure raises a stage again.
    first.alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A, { status: 'delivered', attempts: 2 })), 10)
    await first.alerts.settled()
    expect(quiet.calls).toHaveLength(1)
    now += ALERT_MEMORY_MS
    first.alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A, { status: 'delivered', attempts: 2 })), 10)
    await first.alerts.settled()
    expect(quiet.calls).toHaveLength(2)

    const back = fakeStore({ clear: 2 })
    const second = alertsWith(back.store)
    second.alerts.afterRound(undefined, [endpointOf(URL_A)], state(target(URL_A)), 600)
    // Known to have a stage: a first-attempt delivery asks too.
    second.alerts.afterRound(
      undefined,
      [endpointOf(URL_A)],
      state(target(URL_A, { status: 'delivered', attempts: 1 })),
      10,
    )
    await second.alerts.settled()
    expect(back.calls.map((call) => call.command)).toEqual(['eventwireRaiseAlert', 'eventwireClearAlert'])
    expect(second.told.at(-1)).toEqual({ kind: 'back', url: URL_A })
  })

  it('defines its scripts once, reports a failed command and goes on', async () => {
    const { store, defined } = fakeStore({ fail: new Error('READONLY') })
    const { alerts, failures, told } = alertsWith(store)
    alerts.afterRound('acme', [endpointOf(URL_A)], state(target(URL_A)), 300)
    alerts.afterRound('beta', [endpointOf(URL_A)], state(target(URL_A)), 300)
    await alerts.settled()
    expect(defined).toEqual(['eventwireRaiseAlert', 'eventwireClearAlert'])
    expect(failures.map((failure) => failure.message)).toEqual(['READONLY', 'READONLY'])
    expect(told).toEqual([])
  })

  it('names a hash per destination, and one of its own for the workers’ own webhooks', () => {
    expect(destinationKey('bull:q', 'alerts', 'acme')).toBe('bull:q:alerts:acme')
    expect(destinationKey('bull:q', 'alerts', undefined)).toBe('bull:q:alerts')
  })
})

describe('the alerts option, its messages', () => {
  it('names what it expected and the names people reach for', () => {
    expect(() => resolveAlerts('on')).toThrow(
      'Invalid option `alerts`: expected { shares?, autoDisable? }, or false for none.',
    )
    expect(() => resolveAlerts({ disable: true })).toThrow(
      'Invalid option `alerts.disable`: no such option; use `autoDisable` instead.',
    )
    expect(() => resolveAlerts({ shares: [0.9, 0.5] })).toThrow(
      'Invalid option `alerts.shares`: expected 1 to 10 shares of the retry window in increasing order, each above 0 and below 1, such as [0.25, 0.5, 0.75]; got [0.9,0.5].',
    )
    expect(() => resolveAlerts({ autoDisable: 1 })).toThrow(
      'Invalid option `alerts.autoDisable`: expected true or false.',
    )
    const ten = Array.from({ length: 10 }, (_, i) => (i + 1) / 11)
    expect(resolveAlerts({ shares: ten })?.shares).toEqual(ten)
  })
})
