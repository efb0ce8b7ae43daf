import { afterEach, describe, expect, it, vi } from 'vitest'
import { isRetryableStatus, retryAfterMs } from '../../src/core/retry-policy.js'
import { resolveClientOptions } from '../../src/client/options.js'
import { retryDelay, serverWait, statusVerdict } from '../../src/client/retry-policy.js'
import { MAX_TIMER_MS } from '../../src/core/timers.js'
import { newDeliveryState } from '../../src/webhook/delivery/state.js'
import { runUrlRound } from '../../src/webhook/delivery/url-round.js'
import { askedUnder, RETRY_AFTER_ROWS, RETRYABLE_STATUSES, TABLE_NOW } from '../helpers/retry-policy-table.js'

// One table (test/helpers/retry-policy-table.ts), three readers: the shared rules themselves, the
// client's delay before a batch's retry, and the webhook engine's due time for its next round.

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('the shared rules (core/retry-policy.ts)', () => {
  it.each(RETRYABLE_STATUSES)('%i: retried %s', (status, retried) => {
    expect(isRetryableStatus(status)).toBe(retried)
  })

  it.each(RETRY_AFTER_ROWS)('Retry-After %j: %s', (header, asks) => {
    expect(retryAfterMs(header, TABLE_NOW, 60_000)).toBe(askedUnder(asks, 60_000))
    expect(retryAfterMs(header, TABLE_NOW, MAX_TIMER_MS)).toBe(askedUnder(asks, MAX_TIMER_MS))
  })
})

describe("the client's retry delay", () => {
  const { retry } = resolveClientOptions('key', { retry: { baseDelay: 2_000, maxDelay: 2_000, maxRetryAfter: 60_000 } })

  it.each(RETRYABLE_STATUSES)('%i: retried %s', (status, retried) => {
    expect(statusVerdict(status)).toBe(retried ? 'retry' : 'reject')
  })

  it.each(RETRY_AFTER_ROWS)('Retry-After %j (%s): the longer of the backoff and the header', (header, asks) => {
    vi.useFakeTimers({ now: TABLE_NOW, toFake: ['Date'] })
    // Jitter factor 1: the backoff is 2 s.
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    expect(retryDelay(serverWait({ retryAfter: header }, retry), 1, retry)).toBe(
      Math.max(2_000, askedUnder(asks, 60_000) ?? 0),
    )
  })
})

describe("the webhook engine's next round", () => {
  const admitAll = () => Promise.resolve({ kind: 'attempt' as const, answered: () => {}, unused: () => {} })

  it.each(RETRYABLE_STATUSES)('%i: retried %s', async (status, retried) => {
    const state = newDeliveryState('e1', [0], 60_000, TABLE_NOW)
    const decision = await runUrlRound(
      state,
      { mode: 'each', now: () => TABLE_NOW, backoff: () => 1_000 },
      admitAll,
      async () => ({
        ok: true,
        status,
        retryAfter: null,
      }),
    )
    expect(decision.kind).toBe(retried ? 'retry' : 'finished')
  })

  it.each(RETRY_AFTER_ROWS)('Retry-After %j (%s): the longer of the backoff and the header', async (header, asks) => {
    vi.useFakeTimers({ now: TABLE_NOW, toFake: ['Date'] })
    const window = Number.MAX_SAFE_INTEGER - TABLE_NOW
    const state = newDeliveryState('e1', [0], window, TABLE_NOW)
    const decision = await runUrlRound(
      state,
      { mode: 'each', now: () => TABLE_NOW, backoff: () => 2_000 },
      admitAll,
      async () => ({
        ok: true,
        status: 503,
        retryAfter: header,
      }),
    )
    expect(decision).toEqual({ kind: 'retry', dueAt: TABLE_NOW + Math.max(2_000, askedUnder(asks, MAX_TIMER_MS) ?? 0) })
  })
})
