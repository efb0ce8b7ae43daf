import { expect, it } from 'vitest'
import { constantTimeEqual } from '../../src/webhook/signature.js'

/** Median time of `runs` calls, in ns. */
function median(runs: number, action: () => void): number {
  const times: number[] = []
  for (let run = 0; run < runs; run++) {
    const started = process.hrtime.bigint()
    action()
    times.push(Number(process.hrtime.bigint() - started))
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)] ?? 0
}

it('takes the same time whether the strings differ at the first or the last character', () => {
  // Long strings make any early exit stand out by orders of magnitude over timer noise.
  const length = 200_000
  const secret = 'a'.repeat(length)
  const differsFirst = `b${'a'.repeat(length - 1)}`
  const differsLast = `${'a'.repeat(length - 1)}b`
  for (let warm = 0; warm < 20; warm++) constantTimeEqual(secret, differsFirst) || constantTimeEqual(secret, differsLast)
  const first = median(41, () => constantTimeEqual(secret, differsFirst))
  const last = median(41, () => constantTimeEqual(secret, differsLast))
  expect(constantTimeEqual(secret, differsFirst) || constantTimeEqual(secret, differsLast)).toBe(false)
  expect(constantTimeEqual(secret, secret.slice(0))).toBe(true)
  // An early exit would make `first` hundreds of times faster than `last`.
  expect(first / last).toBeGreaterThan(0.5)
  expect(first / last).toBeLessThan(2)
})
