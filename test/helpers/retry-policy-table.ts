// The one table of retry rules that both halves are held to: the client (test/client and
// test/core/retry-policy.test.ts run it against the retry delay of a batch) and the webhook engine
// (against a round's due time). Each row is what the rules say, whoever reads the answer.

/** A fixed instant on a whole second: HTTP dates have whole seconds. */
export const TABLE_NOW = Date.UTC(2026, 10, 25, 12, 0, 0)

const date = (offsetMs: number) => new Date(TABLE_NOW + offsetMs).toUTCString()

/** Statuses and whether each is worth another attempt. */
export const RETRYABLE_STATUSES: ReadonlyArray<readonly [status: number, retried: boolean]> = [
  [408, true],
  [429, true],
  [500, true],
  [502, true],
  [503, true],
  [599, true],
  [400, false],
  [404, false],
  [409, false],
  [428, false],
  [499, false],
  [600, false],
  [999, false],
]

/**
 * `Retry-After` values and the milliseconds each asks for before any cap (`Infinity`: more than
 * any cap), or `'backoff'`: nothing to wait for, the backoff delay applies.
 */
export const RETRY_AFTER_ROWS: ReadonlyArray<readonly [header: string | null, asks: number | 'backoff', why: string]> =
  [
    ['7', 7_000, 'delay-seconds'],
    [' 7 ', 7_000, 'delay-seconds with the spaces a header value may carry'],
    ['3600', 3_600_000, 'an hour'],
    ['9'.repeat(30), Number.POSITIVE_INFINITY, 'more seconds than any cap'],
    [date(5_000), 5_000, 'an HTTP date 5 s ahead'],
    [date(7_200_000), 7_200_000, 'an HTTP date 2 h ahead'],
    [null, 'backoff', 'no header'],
    ['', 'backoff', 'an empty header'],
    ['0', 'backoff', 'zero'],
    ['-30', 'backoff', 'a negative number: not 1*DIGIT'],
    ['1.5', 'backoff', 'a fraction: not 1*DIGIT'],
    ['0x10', 'backoff', 'hexadecimal: not 1*DIGIT'],
    ['1e3', 'backoff', 'an exponent: not 1*DIGIT'],
    ['+5', 'backoff', 'a sign: not 1*DIGIT'],
    ['soon', 'backoff', 'text'],
    [date(0), 'backoff', 'an HTTP date that is now'],
    [date(-30_000), 'backoff', 'an HTTP date in the past (a server clock behind ours)'],
    ['2099-01-01T00:00:00Z', 'backoff', 'an ISO date: not an HTTP date'],
    ['01 Jan 2099 00:00:00 GMT', 'backoff', 'a date without its day name: not an HTTP date'],
    ['We, 01 Jan 2099 00:00:00 GMT', 'backoff', 'a day name cut short: not an HTTP date'],
  ]

/** What a row asks for under `cap`: milliseconds, or `undefined` for the backoff. */
export function askedUnder(asks: number | 'backoff', cap: number): number | undefined {
  return asks === 'backoff' ? undefined : Math.min(asks, cap)
}
