import { parseArgs, type ParseArgsConfig } from 'node:util'
import { InvalidArgumentError } from './arguments.js'
import { EXIT, type ExitCode } from './exit-codes.js'
import { formatHelp, type HelpSection } from './help.js'
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
  -readonly [K in keyof S]: S[K] extends { default: unknown } | { required: true } ? ValueOf<S[K]> : ValueOf<S[K]> | undefined
}

/** The one word a command takes after its name (`send <type>`), one of a few. */
export interface OperandSpec<A extends string> {
  readonly name: string
  readonly description: string
  readonly choices: readonly A[]
}

/** A command: what its help says, what it takes and what it does. */
export interface CommandSpec<S extends OptionSpecs, A extends string> {
  readonly name: string
  /** One line, for the program's list of commands. */
  readonly summary: string
  /** The paragraph at the top of the command's help. */
  readonly description: string
  readonly operand?: OperandSpec<A>
  readonly options: S
  /** Text after the options in help: exit codes, an example. */
  readonly epilog: string
  run(options: OptionValues<S>, operand: A): Promise<ExitCode>
}

/** A command ready to run from its own part of the command line. */
export interface Command {
  readonly name: string
  readonly summary: string
  /** `dev [options]`, `send [options] <type>`. */
  readonly usage: string
  help(width: number): string
  /** Runs the command, or prints its help for `-h`/`--help`; a wrong command line throws a `UsageError`. */
  run(argv: readonly string[], width: number): Promise<ExitCode>
}

const HELP: OptionSpec = { long: 'help', short: 'h', description: 'display help for command' }

/** `-p, --port <port>`: how help and error messages name an option. */
export function flags(option: OptionSpec): string {
  return `${option.short === undefined ? '' : `-${option.short}, `}--${option.long}${option.value === undefined ? '' : ` <${option.value}>`}`
}

function describe(option: OptionSpec): string {
  const notes = [
    option.choices && `one of: ${option.choices.join(', ')}`,
    option.default !== undefined && `default: ${String(option.default)}`,
    option.env && `env: ${option.env}`,
  ].filter((note) => typeof note === 'string')
  return notes.length === 0 ? option.description : `${option.description} (${notes.join('; ')})`
}

/** `given` says where the text came from, for the message: `argument 'x'`, `value 'x' from env 'NAME'`. */
function parseValue(option: OptionSpec, text: string, previous: unknown, given: string): unknown {
  try {
    if (option.choices && !option.choices.includes(text)) throw new InvalidArgumentError(`Allowed choices are ${option.choices.join(', ')}.`)
    return option.parse ? option.parse(text, previous) : text
  } catch (error) {
    if (error instanceof InvalidArgumentError) usageError(`option '${flags(option)}' ${given} is invalid. ${error.message}`)
    throw error
  }
}

/**
 * Reads options and operands with `parseArgs`'s tokens, in order, so that repeatable options
 * collect and every message names the option as help shows it; then fills in what is missing
 * from the environment and the defaults. Returns `undefined` when help was asked for.
 */
function parseCommandLine(options: OptionSpecs, argv: readonly string[]): { values: Record<string, unknown>; operands: string[] } | undefined {
  const known = new Map([...Object.entries(options), ['help', HELP] as const].map(([key, option]) => [option.long, { key, option }]))
  const config: ParseArgsConfig['options'] = Object.fromEntries(
    [...known.values()].map(({ option }) => [option.long, { type: option.value === undefined ? 'boolean' : 'string', ...(option.short === undefined ? {} : { short: option.short }) }]),
  )
  // Not strict: unknown options come back as tokens, and the messages are ours.
  const { tokens } = parseArgs({ args: [...argv], options: config, strict: false, allowPositionals: true, tokens: true })
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
    if (fromEnv !== undefined) values[key] = parseValue(option, fromEnv, undefined, `value '${fromEnv}' from env '${option.env}'`)
    else if (option.default !== undefined) values[key] = option.default
    else if (option.required) usageError(`required option '${flags(option)}' not specified`)
  }
  return { values, operands }
}

function checkOperands<A extends string>(command: string, operand: OperandSpec<A> | undefined, operands: readonly string[]): A | undefined {
  const expected = operand === undefined ? 0 : 1
  if (operands.length > expected) usageError(`too many arguments for '${command}'. Expected ${expected} argument(s) but got ${operands.length}.`)
  if (operand === undefined) return undefined
  const [value] = operands
  if (value === undefined) usageError(`missing required argument '${operand.name}'`)
  if (!(operand.choices as readonly string[]).includes(value)) {
    usageError(`argument '${operand.name}' cannot be '${value}'. Allowed choices are ${operand.choices.join(', ')}.`)
  }
  return value as A
}

/** Makes a {@link Command} of a spec: parsing, checks and help, the types of its options kept inside. */
export function defineCommand<S extends OptionSpecs, A extends string = never>(spec: CommandSpec<S, A>): Command {
  const usage = `${spec.name} [options]${spec.operand ? ` <${spec.operand.name}>` : ''}`
  const help = (width: number) => {
    const sections: HelpSection[] = []
    if (spec.operand) sections.push({ title: 'Arguments', rows: [[spec.operand.name, `${spec.operand.description} (one of: ${spec.operand.choices.join(', ')})`]] })
    sections.push({ title: 'Options', rows: [...Object.values(spec.options), HELP].map((option) => [flags(option), describe(option)] as const) })
    return formatHelp({ usage: `eventwire ${usage}`, description: spec.description, sections, epilog: spec.epilog }, width)
  }
  return {
    name: spec.name,
    summary: spec.summary,
    usage,
    help,
    async run(argv, width) {
      const parsed = parseCommandLine(spec.options, argv)
      if (parsed === undefined) {
        process.stdout.write(help(width))
        return EXIT.ok
      }
      const operand = checkOperands(spec.name, spec.operand, parsed.operands)
      // parseCommandLine gave each option its spec's value (or left it out, where the type allows undefined).
      return spec.run(parsed.values as OptionValues<S>, operand as A)
    },
  }
}
