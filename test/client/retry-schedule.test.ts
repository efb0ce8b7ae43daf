import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { resolveClientOptions } from '../../src/client/options.js'
import { backoffDelay, JITTER_MIN } from '../../src/client/retry-policy.js'
import { answer, fakeEndpoint } from '../helpers/fake-endpoint.js'

it('rides out an outage of at least 30 s with the default retry budget, even with the shortest jitter', () => {
  const { retry, timeout } = resolveClientOptions('key', {})
  const delays = Array.from({ length: retry.limit }, (_, index) => backoffDelay(index + 1, retry) * JITTER_MIN)
  // Waiting alone, not counting the attempts themselves (each up to `timeout` when nothing answers).
  const shortestWait = delays.reduce((sum, delay) => sum + delay, 0)
  expect(retry.limit).toBeGreaterThanOrEqual(10)
  expect(shortestWait).toBeGreaterThanOrEqual(30_000)
  expect(Math.max(...delays)).toBeLessThanOrEqual(retry.maxDelay)
  expect(timeout).toBe(10_000)
})

describe('the retry schedule', () => {
  let started = 0
  beforeEach(() => {
    vi.useFakeTimers()
    started = Date.now()
  })
  afterEach(() => {
    vi.useRealTimers()
    vi.restoreAllMocks()
  })

  /** Lets the fake clock's due work and promises run, without moving the clock, until `count` requests went out. */
  async function untilSent(requests: readonly unknown[], count: number): Promise<void> {
    for (let turn = 0; turn < 100 && requests.length < count; turn++) await vi.advanceTimersByTimeAsync(0)
    expect(requests).toHaveLength(count)
  }

  /** Sends and runs the fake clock until the outcome is known. */
  async function settle<T>(sending: Promise<T>): Promise<T> {
    await vi.runAllTimersAsync()
    return sending
  }

  it('waits baseDelay before retry 1 and doubles it for each retry after, up to maxDelay (jitter factor 1)', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const { send, gaps } = fakeEndpoint((index) => answer(index < 5 ? 500 : 200), { baseDelay: 1_000, maxDelay: 6_000 })
    expect(await settle(send('b'))).toMatchObject({ ok: true, attempts: 6 })
    expect(gaps('b')).toEqual([1_000, 2_000, 4_000, 6_000, 6_000])
  })

  it.each([
    [0, 0.8],
    [0.5, 1],
    [0.75, 1.1],
    [0.999_999, 1.2],
  ])(
    'multiplies each backoff delay by a jitter factor spread evenly over [0.8, 1.2]: Math.random() %d gives %d',
    async (random, factor) => {
      vi.spyOn(Math, 'random').mockReturnValue(random)
      const { send, gaps } = fakeEndpoint((index) => answer(index < 2 ? 503 : 200), { baseDelay: 1_000 })
      await settle(send('b'))
      const [first = 0, second = 0] = gaps('b')
      expect(first).toBeCloseTo(1_000 * factor, -1)
      expect(second).toBeCloseTo(2_000 * factor, -1)
    },
  )

  it.each([429, 503])(
    'waits for the Retry-After of a %i before retrying that batch, without jitter, capped at maxRetryAfter',
    async (status) => {
      vi.spyOn(Math, 'random').mockReturnValue(0)
      const { send, gaps } = fakeEndpoint(
        (index) =>
          answer(index === 0 ? status : index === 1 ? status : 200, { 'retry-after': index === 0 ? '7' : '3600' }),
        {
          baseDelay: 1_000,
          maxRetryAfter: 20_000,
        },
      )
      expect(await settle(send('b'))).toMatchObject({ ok: true, attempts: 3 })
      expect(gaps('b')).toEqual([7_000, 20_000])
    },
  )

  it('a 429 pauses every batch to the endpoint until its Retry-After has passed; a 500 or a 503 pauses only its own batch', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    for (const [status, pausesOthers] of [
      [429, true],
      [500, false],
      [503, false],
    ] as const) {
      const start = Date.now()
      const { requests, send } = fakeEndpoint((index, body) =>
        answer(body === 'first' && index === 0 ? status : 200, { 'retry-after': '5' }),
      )
      const first = send('first')
      await untilSent(requests, 1)
      // Sent after the first batch's failure, while that one waits for its retry.
      const second = send('second')
      await settle(Promise.all([first, second]))
      const secondAt = requests.find((request) => request.body === 'second')?.at ?? Number.NaN
      expect({ status, waited: secondAt - start }).toEqual({ status, waited: pausesOthers ? 5_000 : 0 })
    }
  })

  it('a 429 without Retry-After pauses every batch for the delay of the retry it causes (baseDelay for a first failure)', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const { requests, send } = fakeEndpoint((index, body) => answer(body === 'first' && index < 2 ? 429 : 200), {
      baseDelay: 1_000,
    })
    const first = send('first')
    await untilSent(requests, 1)
    const second = send('second')
    await settle(Promise.all([first, second]))
    const at = (body: string) =>
      requests.filter((request) => request.body === body).map((request) => request.at - started)
    // Each pause lasts as long as the retry it precedes, so the batch that got the 429 is held no longer than its own backoff.
    expect(at('first')).toEqual([0, 1_000, 3_000])
    expect(at('second')).toEqual([1_000])
  })
})
