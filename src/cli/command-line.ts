import { EXIT, type ExitCode } from './exit-codes.js'
import { formatHelp, type HelpSection } from './help.js'
import { flags, HELP, parseCommandLine, type OptionSpec, type OptionSpecs, type OptionValues } from './options.js'
import { usageError } from './usage.js'

/** The one word a command takes after its name (`send <type>`), one of a few. */
export interface OperandSpec<A extends string> {
  readonly name: string
  readonly description: string
  readonly choices: readonly A[]
}

/** A word after the operand that some of its choices take (`show <id>`), and which those are. */
export interface ArgumentSpec<A extends string> {
  readonly name: string
  readonly description: string
  /** The operand's choices that take it; the others refuse it. */
  readonly for: readonly A[]
  /** Whether those choices may go without it. */
  readonly optional?: boolean
}

/** A command: what its help says, what it takes and what it does. */
export interface CommandSpec<S extends OptionSpecs, A extends string> {
  readonly name: string
  /** One line, for the program's list of commands. */
  readonly summary: string
  /** The paragraph at the top of the command's help. */
  readonly description: string
  readonly operand?: OperandSpec<A>
  /** A second word, for some of the operand's choices. */
  readonly argument?: ArgumentSpec<A>
  readonly options: S
  /** Text after the options in help: exit codes, an example. */
  readonly epilog: string
  run(options: OptionValues<S>, operand: A, argument: string | undefined): Promise<ExitCode>
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

/** An option's line in help: what it does, then what it takes (its choices, default, environment variable). */
function describe(option: OptionSpec): string {
  const notes = [
    option.choices && `one of: ${option.choices.join(', ')}`,
    option.default !== undefined && `default: ${String(option.default)}`,
    option.env && `env: ${option.env}`,
  ].filter((note) => typeof note === 'string')
  return notes.length === 0 ? option.description : `${option.description} (${notes.join('; ')})`
}

function checkOperands<A extends string>(
  command: string,
  operand: OperandSpec<A> | undefined,
  argument: ArgumentSpec<A> | undefined,
  operands: readonly string[],
): { operand: A | undefined; argument: string | undefined } {
  const [value, second] = operands
  const takesSecond = argument?.for.includes(value as A) === true
  const expected = operand === undefined ? 0 : takesSecond ? 2 : 1
  if (operands.length > expected)
    usageError(`too many arguments for '${command}'. Expected ${expected} argument(s) but got ${operands.length}.`)
  if (operand === undefined) return { operand: undefined, argument: undefined }
  if (value === undefined) usageError(`missing required argument '${operand.name}'`)
  if (!(operand.choices as readonly string[]).includes(value)) {
    usageError(`argument '${operand.name}' cannot be '${value}'. Allowed choices are ${operand.choices.join(', ')}.`)
  }
  if (takesSecond && second === undefined && argument.optional !== true)
    usageError(`missing required argument '${argument.name}' for '${value}'`)
  return { operand: value as A, argument: second }
}

/** Makes a {@link Command} of a spec: parsing, checks and help, the types of its options kept inside. */
export function defineCommand<S extends OptionSpecs, A extends string = never>(spec: CommandSpec<S, A>): Command {
  const usage = `${spec.name} [options]${spec.operand ? ` <${spec.operand.name}>` : ''}${spec.argument ? ` [${spec.argument.name}]` : ''}`
  const help = (width: number) => {
    const sections: HelpSection[] = []
    if (spec.operand)
      sections.push({
        title: 'Arguments',
        rows: [
          [spec.operand.name, `${spec.operand.description} (one of: ${spec.operand.choices.join(', ')})`],
          ...(spec.argument
            ? [[spec.argument.name, `${spec.argument.description} (for ${spec.argument.for.join(', ')})`] as const]
            : []),
        ],
      })
    sections.push({
      title: 'Options',
      rows: [...Object.values(spec.options), HELP].map((option) => [flags(option), describe(option)] as const),
    })
    return formatHelp(
      { usage: `eventwire ${usage}`, description: spec.description, sections, epilog: spec.epilog },
      width,
    )
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
      const { operand, argument } = checkOperands(spec.name, spec.operand, spec.argument, parsed.operands)
      // parseCommandLine gave each option its spec's value (or left it out, where the type allows undefined).
      return spec.run(parsed.values as OptionValues<S>, operand as A, argument)
    },
  }
}
