// A URL's token bucket on a clock moved by hand: a burst of one second's worth, then the rate.
import { describe, expect, it } from 'vitest'
import { TokenBucket } from '../../src/webhook/delivery/rate-limit.js'

/** Takes as many tokens as the bucket gives at `now`, and says how many. */
function drain(bucket: TokenBucket, now: number): number {
  let taken = 0
  while (bucket.take('u', now) === 0) taken++
  return taken
}

describe('TokenBucket', () => {
  it('gives a burst of one second of the rate at once, then nothing until a token comes back', () => {
    const bucket = new TokenBucket(10, 0)
    expect(drain(bucket, 0)).toBe(10)
    expect(bucket.take('u', 0)).toBe(100)
    expect(bucket.take('u', 40)).toBe(60)
    expect(drain(bucket, 99)).toBe(0)
    expect(drain(bucket, 100)).toBe(1)
  })

  it('refills at the rate, never past one second of it', () => {
    const bucket = new TokenBucket(10, 0)
    drain(bucket, 0)
    expect(drain(bucket, 350)).toBe(3)
    expect(drain(bucket, 60_000)).toBe(10)
  })

  it('gives at least one token under a rate below one a second, and waits its whole period for the next', () => {
    const bucket = new TokenBucket(0.5, 0)
    expect(drain(bucket, 0)).toBe(1)
    expect(bucket.take('u', 0)).toBe(2_000)
    expect(bucket.take('u', 1_999)).toBe(1)
    expect(drain(bucket, 2_000)).toBe(1)
  })

  it('ignores a clock that reads earlier than before', () => {
    const bucket = new TokenBucket(10, 1_000)
    drain(bucket, 1_000)
    expect(bucket.take('u', 500)).toBe(100)
    expect(drain(bucket, 1_100)).toBe(1)
  })

  it('takes back a token given back, never past one second of the rate', () => {
    const bucket = new TokenBucket(2, 0)
    expect(drain(bucket, 0)).toBe(2)
    bucket.giveBack()
    expect(drain(bucket, 0)).toBe(1)
    bucket.giveBack()
    bucket.giveBack()
    bucket.giveBack()
    expect(drain(bucket, 0)).toBe(2)
  })
})
