import { expect, it } from 'vitest'
import { resolveClientOptions } from '../src/client/options.js'
import { backoffDelay, JITTER_MIN } from '../src/client/transport.js'

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
