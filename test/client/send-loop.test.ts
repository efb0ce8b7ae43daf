import { describe, expect, it } from 'vitest'
import { resolveClientOptions } from '../../src/client/options.js'
import { RateLimitPause } from '../../src/client/retry-policy.js'
import { NO_PAGE } from '../../src/client/page-exit.js'
import { sendWithRetries } from '../../src/client/send-loop.js'
import type { AttemptOutcome } from '../../src/client/transport.js'

// What the retry loop does at close()'s deadline, with attempts that report what the test says:
// the real transports are held to the rest of the contract in transport-conformance.test.ts.

const { retry } = resolveClientOptions('key', { retry: { baseDelay: 60_000, maxDelay: 60_000 } })

describe("sendWithRetries at close()'s deadline", () => {
  it('during the wait before a retry: ERR_CLOSE_TIMEOUT naming the failure that caused the wait', async () => {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:9')
    const deadline = new AbortController()
    const attempt = async (): Promise<AttemptOutcome> => {
      // Once the loop has taken this failure in (every microtask has run) it waits a minute to retry.
      setImmediate(() => deadline.abort(new Error('close() timed out')))
      return { verdict: 'retry', status: undefined, retryAfter: null, error: refused }
    }
    const retries: number[] = []
    const result = await sendWithRetries(
      attempt,
      { signal: deadline.signal, onRetry: (count) => retries.push(count), waits: NO_PAGE.retryWaits() },
      retry,
      new RateLimitPause(),
    )
    expect(result).toEqual({ ok: false, code: 'ERR_CLOSE_TIMEOUT', status: undefined, attempts: 1, error: refused })
    expect(retries).toEqual([])
  })

  it('during an attempt after a failed one: ERR_CLOSE_TIMEOUT naming the earlier failure, not the cut attempt', async () => {
    const first = new Error('socket hang up')
    const deadline = new AbortController()
    const outcomes: AttemptOutcome[] = [
      { verdict: 'retry', status: 503, retryAfter: null, error: first },
      { verdict: 'retry', status: undefined, retryAfter: null, error: new Error('aborted by the deadline') },
    ]
    let attempts = 0
    const attempt = async (): Promise<AttemptOutcome> => {
      if (attempts === 1) deadline.abort(new Error('close() timed out'))
      return outcomes[attempts++] as AttemptOutcome
    }
    const result = await sendWithRetries(
      attempt,
      { signal: deadline.signal, onRetry: () => undefined, waits: NO_PAGE.retryWaits() },
      // A retry at once: the second attempt is the one the deadline cuts.
      { ...retry, baseDelay: 0, maxDelay: 0 },
      new RateLimitPause(),
    )
    expect(result).toEqual({ ok: false, code: 'ERR_CLOSE_TIMEOUT', status: undefined, attempts: 2, error: first })
  })
})
