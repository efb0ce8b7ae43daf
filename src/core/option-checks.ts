import { OptionsError } from './errors/options-error.js'

/**
 * A whole-number option within `[min, max]`, or `fallback` when not given.
 *
 * @throws {@link OptionsError} naming the option.
 */
export function integerOption(name: string, value: unknown, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new OptionsError(name, `expected a whole number from ${min} to ${max}, got ${String(value)}.`)
  }
  return value
}

/**
 * A wait in ms: a number >= 0, or `Infinity` for no limit; `fallback` when not given.
 *
 * @throws {@link OptionsError} naming the option.
 */
export function timeoutOption(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new OptionsError(name, `expected a number of ms >= 0 or Infinity, got ${String(value)}.`)
  }
  return value
}

/** Parses an absolute `http:` or `https:` URL; `undefined` for anything else. */
export function parseHttpUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string') return undefined
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined
  } catch {
    return undefined
  }
}
