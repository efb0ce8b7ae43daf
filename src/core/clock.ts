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
