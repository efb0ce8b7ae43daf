import type { Clock } from '../../core/clock.js'

/** How Redis tells its time: ioredis's `time()`, seconds and microseconds as strings. */
export interface TimeSource {
  time(): Promise<[string | number, string | number]>
}

/** How often a worker reads Redis's time again (ms): its own clock drifts, or is stepped. */
export const CLOCK_SYNC_MS = 60_000

/** How far a worker's wall clock may be from Redis's before the worker warns (ms). */
export const CLOCK_SKEW_WARNING_MS = 2_000

/** Readings per sync: the one with the shortest round trip is kept, the least blurred by it. */
const READINGS = 3

/**
 * Redis's clock, as one worker process reads it: ms since the epoch as Redis's `TIME` gives them,
 * counted on this process's monotonic clock since the last reading (so a step of the local wall
 * clock changes nothing). What a worker stores in Redis for other workers to read (an event's
 * retry window, when each of its URLs is due) is on this clock: workers whose own clocks disagree
 * still agree on those. Before the first reading it reads as the local wall clock.
 */
export class RedisClock {
  #offset = Date.now() - performance.now()
  #skewMs = 0

  /** Whole ms on Redis's clock. */
  readonly now: Clock = () => Math.round(performance.now() + this.#offset)

  /** How far this process's wall clock was ahead of Redis's (ms; behind when negative) at the last reading. */
  get skewMs(): number {
    return this.#skewMs
  }

  /** Reads Redis's time a few times, and keeps the reading with the shortest round trip. */
  async sync(source: TimeSource): Promise<void> {
    let best: { rtt: number; offset: number; skew: number } | undefined
    for (let reading = 0; reading < READINGS; reading++) {
      const sent = performance.now()
      const [seconds, micros] = await source.time()
      const received = performance.now()
      const redis = Number(seconds) * 1_000 + Number(micros) / 1_000
      // Redis read its clock about halfway through the round trip.
      const middle = (sent + received) / 2
      const rtt = received - sent
      if (best === undefined || rtt < best.rtt) {
        const wall = Date.now() - (received - middle)
        best = { rtt, offset: redis - middle, skew: wall - redis }
      }
    }
    const { offset, skew } = best as { offset: number; skew: number }
    this.#offset = offset
    this.#skewMs = Math.round(skew)
  }
}

/**
 * What a worker says when its clock and Redis's disagree by more than {@link CLOCK_SKEW_WARNING_MS}.
 * eventwire's own shared times are on Redis's clock, but BullMQ runs each worker's delayed jobs on
 * that worker's own clock.
 */
export function skewWarning(skewMs: number): string {
  const seconds = (Math.abs(skewMs) / 1_000).toFixed(1)
  // Stryker disable next-line EqualityOperator: a skew of 0 is never warned about (the bound is 2 s).
  const way = skewMs > 0 ? 'ahead of' : 'behind'
  return `eventwire: this worker's clock is ${seconds} s ${way} Redis's. eventwire times what workers share (breakers, rates, retry windows) on Redis's clock, but BullMQ takes delayed jobs on each worker's own clock: a worker whose clock runs ahead takes retries early, one behind takes them late. Keep every clock in sync (NTP).`
}
