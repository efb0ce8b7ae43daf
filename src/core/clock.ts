let cachedAt = Number.NaN
let cachedIso = ''

/**
 * The current time as ISO 8601 with milliseconds and `Z`. Formatting a `Date` costs about a
 * microsecond; calls within the same millisecond (a burst) share one string.
 */
export function isoNow(): string {
  const now = Date.now()
  if (now !== cachedAt) {
    cachedAt = now
    cachedIso = new Date(now).toISOString()
  }
  return cachedIso
}

/** A source of milliseconds: the wall clock (`Date.now`) or a monotonic one. */
export type Clock = () => number

/**
 * Whole milliseconds since the epoch that only move forward, at the rate of real time, whatever
 * the wall clock does afterwards (a VM restore, `date -s`, an NTP step): the wall clock as it was
 * when the process started, plus the monotonic time since. What waits and windows inside one
 * process are measured with; it reads as `Date.now()` until the wall clock is stepped. What is
 * stored for other processes is on Redis's clock (BullMQ's `RedisClock`).
 */
export const monotonicNow: Clock = () => Math.floor(performance.timeOrigin + performance.now())

/**
 * Whole milliseconds on {@link monotonicNow} since `origin`, as small integers while they fit in
 * 30 bits (12 days; what every V8 build keeps unboxed): V8 keeps such a number inside the object
 * that holds it, where an epoch-sized one, or any number a subtraction of two of them gave, is a
 * 16-byte box of its own. Past that the count goes on, boxed. For objects kept by the hundred
 * thousand (deliveries waiting for a retry).
 */
export function monotonicSince(origin: number): Clock {
  return () => {
    const elapsed = monotonicNow() - origin
    return elapsed < 0x40000000 ? elapsed | 0 : elapsed
  }
}
