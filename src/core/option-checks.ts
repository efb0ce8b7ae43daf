import { OptionsError } from './errors/options-error.js'

/** A value as an error message shows it: strings quoted, so that `'20'` does not read as `20`. */
function shown(value: unknown): string {
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : String(value)
}

/** What another library calls one of our options: our option's name, or advice where there is no one name. */
export type OtherName = string | { readonly advice: string }

/**
 * Refuses keys of `given` that are not in `known`, so that a misspelt option, or another client's
 * name for it, is not silently ignored (in JavaScript, nothing else would catch it). `renamed`
 * maps names other clients use to ours, for the message.
 *
 * @throws {@link OptionsError} naming the unknown key.
 */
export function checkOptionNames(
  given: Record<string, unknown>,
  known: Readonly<Record<string, true>>,
  renamed: Readonly<Record<string, OtherName>> = {},
  prefix = '',
): void {
  for (const key of Object.keys(given)) {
    if (Object.hasOwn(known, key)) continue
    const other = Object.hasOwn(renamed, key) ? renamed[key] : undefined
    const hint =
      other === undefined
        ? `the options are ${Object.keys(known).join(', ')}`
        : typeof other === 'string'
          ? `use \`${other}\` instead`
          : other.advice
    throw new OptionsError(`${prefix}${key}`, `no such option; ${hint}.`)
  }
}

/**
 * A whole-number option within `[min, max]`, or `fallback` when not given.
 *
 * @throws {@link OptionsError} naming the option.
 */
export function integerOption(
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new OptionsError(name, `expected a whole number from ${min} to ${max}, got ${shown(value)}.`)
  }
  return value
}

/**
 * One of `choices`, or `undefined` when not given (the caller knows its default).
 *
 * @throws {@link OptionsError} naming the option and the choices.
 */
export function choiceOption<const Choice extends string>(
  name: string,
  value: unknown,
  choices: readonly Choice[],
): Choice | undefined {
  if (value === undefined || choices.includes(value as Choice)) return value as Choice | undefined
  const listed = choices.map((choice) => `'${choice}'`)
  throw new OptionsError(name, `expected ${listed.slice(0, -1).join(', ')} or ${listed.at(-1)}, got ${shown(value)}.`)
}

/**
 * A wait in ms: a number >= 0, or `Infinity` for no limit; `fallback` when not given.
 *
 * @throws {@link OptionsError} naming the option.
 */
export function timeoutOption(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw new OptionsError(name, `expected a number of ms >= 0 or Infinity, got ${shown(value)}.`)
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

/**
 * `text` with the user name and password of every URL in it replaced by `***` (`https://***@host`),
 * a `user:password@` without a scheme at the start or after a quote included: for messages that
 * quote a URL the user gave.
 * After a scheme, everything up to the last `@` before a closing `"` goes, `/`, `?`, `#`, quotes,
 * backticks and spaces included: in a string that does not parse, nobody can tell where a
 * password with such a character in it ends. In prose without quotes that may hide more than
 * the credentials; it never shows them.
 */
export function withoutCredentials(text: string): string {
  return text.replace(/([a-z][a-z\d+.-]*:\/\/)[^"]*@/gi, '$1***@').replace(/(^|")[^"\s]*@/g, '$1***@')
}
