import { parseArgs, type ParseArgsConfig } from 'node:util'
import { InvalidArgumentError } from './arguments.js'
import { usageError } from './usage.js'

/** One option of a command, as the parser reads it and as its help shows it. */
export interface OptionSpec<T = unknown> {
  /** The long name: `write-key` for `--write-key`. */
  readonly long: string
  /** The one-letter name: `k` for `-k`. */
  readonly short?: string
  /** What the value is called in help: `key` for `<key>`. Without it the option is a switch, true when given. */
  readonly value?: string
  readonly description: string
  /** The only values it takes. */
  readonly choices?: readonly string[]
  /** The value when neither the command line nor {@link env} gives one. */
  readonly default?: T
  /** The environment variable read when the command line does not give the option. */
  readonly env?: string
  /** Leaving the option out is a usage error. */
  readonly required?: boolean
  /**
   * Turns the text given into the value, throwing `InvalidArgumentError` when it does not parse;
   * `previous` is the value so far, so that a repeatable option can collect. Without it the
   * value is the text.
   */
  parse?(text: string, previous: T | undefined): T
}

/** A command's options by the name its code reads them under (`writeKey` for `--write-key`). */
export type OptionSpecs = Readonly<Record<string, OptionSpec>>

type ValueOf<O> = O extends { parse(text: string, previous: never): infer T }
  ? T
  : O extends { choices: ReadonlyArray<infer C> }
    ? C
    : O extends { value: string }
      ? string
      : boolean

/** The values a command's options parse to; `undefined` for one neither given, required nor defaulted. */
export type OptionValues<S extends OptionSpecs> = {
  -readonly [K in keyof S]: S[K] extends { default: unknown } | { required: true }
    ? ValueOf<S[K]>
    : ValueOf<S[K]> | undefined
}

/** `-h, --help`, which every command takes. */
export const HELP: OptionSpec = { long: 'help', short: 'h', description: 'display help for command' }

/** `-p, --port <port>`: how help and error messages name an option. */
export function flags(option: OptionSpec): string {
  return `${option.short === undefined ? '' : `-${option.short}, `}--${option.long}${option.value === undefined ? '' : ` <${option.value}>`}`
}

/** `given` says where the text came from, for the message: `argument 'x'`, `value 'x' from env 'NAME'`. */
function parseValue(option: OptionSpec, text: string, previous: unknown, given: string): unknown {
  try {
    if (option.choices && !option.choices.includes(text))
      throw new InvalidArgumentError(`Allowed choices are ${option.choices.join(', ')}.`)
    return option.parse ? option.parse(text, previous) : text
  } catch (error) {
    if (error instanceof InvalidArgumentError)
      usageError(`option '${flags(option)}' ${given} is invalid. ${error.message}`)
    throw error
  }
}

/**
 * Reads options and operands with `parseArgs`'s tokens, in order, so that repeatable options
 * collect and every message names the option as help shows it; then fills in what is missing
 * from the environment and the defaults. Returns `undefined` when help was asked for.
 */
export function parseCommandLine(
  options: OptionSpecs,
  argv: readonly string[],
): { values: Record<string, unknown>; operands: string[] } | undefined {
  const known = new Map(
    [...Object.entries(options), ['help', HELP] as const].map(([key, option]) => [option.long, { key, option }]),
  )
  const config: ParseArgsConfig['options'] = Object.fromEntries(
    [...known.values()].map(({ option }) => [
      option.long,
      {
        type: option.value === undefined ? 'boolean' : 'string',
        ...(option.short === undefined ? {} : { short: option.short }),
      },
    ]),
  )
  // Not strict: unknown options come back as tokens, and the messages are ours.
  const { tokens } = parseArgs({
    args: [...argv],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
  if (tokens.some((token) => token.kind === 'option' && token.name === HELP.long)) return undefined
  const values: Record<string, unknown> = {}
  const operands: string[] = []
  for (const token of tokens) {
    if (token.kind === 'positional') operands.push(token.value)
    if (token.kind !== 'option') continue
    const { key, option } = known.get(token.name) ?? usageError(`unknown option '${token.rawName}'`)
    if (option.value === undefined) {
      if (token.value !== undefined) usageError(`option '${flags(option)}' takes no value`)
      values[key] = true
    } else {
      if (token.value === undefined) usageError(`option '${flags(option)}' argument missing`)
      values[key] = parseValue(option, token.value, values[key], `argument '${token.value}'`)
    }
  }
  for (const [key, option] of Object.entries(options)) {
    if (key in values) continue
    const fromEnv = option.env === undefined ? undefined : process.env[option.env]
    if (fromEnv !== undefined)
      values[key] = parseValue(option, fromEnv, undefined, `value '${fromEnv}' from env '${option.env}'`)
    else if (option.default !== undefined) values[key] = option.default
    else if (option.required) usageError(`required option '${flags(option)}' not specified`)
  }
  return { values, operands }
}
