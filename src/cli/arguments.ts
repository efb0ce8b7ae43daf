/** The longest delay Node's timers keep (2^31 - 1 ms, some 24 days): a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * A value that does not parse, thrown by the parsers below with what was expected; the command
 * line parser adds which option it was given to.
 */
export class InvalidArgumentError extends Error {}

/** `--port`: 0 (any free port) to 65535. */
export function portArgument(value: string): number {
  const port = Number(value)
  if (!/^\d+$/.test(value) || port > 65_535)
    throw new InvalidArgumentError('expected a port number from 0 (any free port) to 65535.')
  return port
}

function wholeNumber(value: string, expected: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new InvalidArgumentError(`expected ${expected}.`)
  return Number(value)
}

/** A whole number of milliseconds, 0 to {@link MAX_TIMER_MS}: Node fires a longer timer at once. */
export function millisecondsArgument(value: string): number {
  const ms = wholeNumber(value, 'a whole number of milliseconds')
  if (ms > MAX_TIMER_MS) throw new InvalidArgumentError(`expected at most ${MAX_TIMER_MS} ms (some 24 days).`)
  return ms
}

/** A whole number, 0 or more. */
export function countArgument(value: string): number {
  return wholeNumber(value, 'a whole number, 0 or more')
}

const AGO = /^(\d+)(s|m|h|d)$/
const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * A point in time as epoch ms: an ISO 8601 date or date-time (`2026-11-28T14:00:00Z`; a
 * date-time without a zone is refused, since it would be read in this machine's zone), epoch ms,
 * or a duration ago (`90m`, `2h`, `1d`). `now` is the clock a duration is counted back from.
 */
export function timeArgument(value: string, now: () => number = Date.now): number {
  const ago = AGO.exec(value)
  if (ago !== null) return Math.max(0, now() - Number(ago[1]) * (UNIT_MS[ago[2] as string] as number))
  if (/^\d+$/.test(value)) return wholeNumber(value, 'a time')
  const zoned = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value)
  const ms = Date.parse(value)
  if (!zoned || Number.isNaN(ms))
    throw new InvalidArgumentError(
      'expected a time: an ISO 8601 date-time with its zone (2026-11-28T14:00:00Z), epoch ms, or how long ago (90m, 2h, 1d).',
    )
  return ms
}

/** A probability, from 0 to 1. */
export function rateArgument(value: string): number {
  const rate = Number(value)
  if (value.trim() === '' || !(rate >= 0 && rate <= 1))
    throw new InvalidArgumentError('expected a number from 0 to 1, e.g. 0.3 to fail 30% of requests.')
  return rate
}

/** Repeatable option: every value, in order. */
export function collect(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value]
}

/** Repeatable `Name: value` (or `Name=value`) header option, collected into one object. */
export function headerArgument(value: string, previous: Readonly<Record<string, string>> = {}): Record<string, string> {
  const separator = value.search(/[:=]/)
  const name = separator > 0 ? value.slice(0, separator).trim() : ''
  if (name === '') throw new InvalidArgumentError('expected "Name: value", e.g. "X-Team: data".')
  return { ...previous, [name]: value.slice(separator + 1).trim() }
}

/**
 * Repeatable `key=value` field option (a string) or `key:=json` (any JSON value: numbers,
 * booleans, objects), collected into one object, as HTTPie writes them.
 */
export function fieldArgument(
  value: string,
  previous: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  const separator = value.indexOf('=')
  const raw = separator > 0 && value[separator - 1] === ':'
  const key = separator > 0 ? value.slice(0, raw ? separator - 1 : separator) : ''
  if (key === '')
    throw new InvalidArgumentError(
      'expected key=value (a string) or key:=json (a number, boolean, object...), e.g. plan=pro or seats:=3.',
    )
  const text = value.slice(separator + 1)
  if (!raw) return { ...previous, [key]: text }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new InvalidArgumentError(`the value of ${key}:= is not JSON: ${text}`)
  }
  checkExactNumbers(key, text)
  return { ...previous, [key]: parsed }
}

/** A JSON number: sign, integer digits, fraction digits, exponent (JS writes `e+22`, JSON may too). */
const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

/**
 * A number's decimal value in one form, so that two spellings of a value compare equal: `1.50`,
 * `15e-1` and `1.5` all give `15e-1`; any zero gives `0`. `undefined` for what is not a number
 * (`Infinity`, `NaN`).
 */
function decimalOf(literal: string): string | undefined {
  const match = NUMBER.exec(literal)
  if (!match) return undefined
  const [, sign, whole = '', fraction = '', exponent = '0'] = match
  const digits = `${whole}${fraction}`.replace(/^0+/, '')
  const trimmed = digits.replace(/0+$/, '')
  if (trimmed === '') return '0'
  return `${sign}${trimmed}e${Number(exponent) - fraction.length + digits.length - trimmed.length}`
}

/**
 * Refuses a `key:=json` value with a number that a JS number cannot hold exactly (an integer past
 * 2^53, more digits than a double keeps, `1e400`): JSON.parse rounds it without a word, and the
 * call would send another number than the one typed.
 */
function checkExactNumbers(key: string, text: string): void {
  // The text is valid JSON: outside strings, a `-` or a digit can only start a number.
  const tokens = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g
  for (const [token] of text.matchAll(tokens)) {
    if (token.startsWith('"')) continue
    const sent = String(Number(token))
    if (decimalOf(token) === decimalOf(sent)) continue
    const whole = token === text.trim()
    throw new InvalidArgumentError(
      `the value of ${key}:= has the number ${token}, which a JavaScript number cannot hold exactly (it reads as ${sent}). ${
        whole ? `Send it as a string: ${key}=${token}.` : `Write it as a JSON string inside the value: "${token}".`
      }`,
    )
  }
}

/** Repeatable `Name=true|false` destination switch, collected into one `integrations` object. */
export function switchArgument(
  value: string,
  previous: Readonly<Record<string, boolean>> = {},
): Record<string, boolean> {
  const match = /^([^=]+)=(true|false)$/.exec(value)
  if (!match?.[1]) throw new InvalidArgumentError('expected Name=true or Name=false, e.g. Webhooks=false.')
  return { ...previous, [match[1]]: match[2] === 'true' }
}
