// The bundler inlines the one field used; the CLI imports no library file for it.
import { version } from '../../package.json'
import type { Command } from './command-line.js'
import { devCommand } from './dev/command.js'
import { EXIT, type ExitCode } from './exit-codes.js'
import { formatHelp } from './help.js'
import { listenCommand } from './listen/command.js'
import { serveCommand } from './serve/command.js'
import { deadLettersCommand } from './registry/dead-letters-command.js'
import { destinationsCommand } from './registry/destinations-command.js'
import { sourcesCommand } from './registry/sources-command.js'
import { sendCommand } from './send/command.js'
import { UsageError, usageError } from './usage.js'

const COMMANDS: readonly Command[] = [
  devCommand,
  listenCommand,
  sendCommand,
  serveCommand,
  sourcesCommand,
  destinationsCommand,
  deadLettersCommand,
]

/** Help is wrapped to the terminal, and to 80 columns when it goes to a file or a pipe. */
function helpWidth(): number {
  return process.stdout.isTTY ? process.stdout.columns : 80
}

function programHelp(): string {
  return formatHelp(
    {
      usage: 'eventwire [options] [command]',
      description:
        "A local platform for eventwire: an ingest API that forwards to webhooks, a webhook receiver, and one-off calls; the platform itself; and an operator's hand on a durable queue's sources, destinations and dead letters.",
      sections: [
        {
          title: 'Options',
          rows: [
            ['-V, --version', 'output the version number'],
            ['-h, --help', 'display help for command'],
          ],
        },
        {
          title: 'Commands',
          rows: [
            ...COMMANDS.map((command) => [command.usage, command.summary] as const),
            ['help [command]', 'display help for command'],
          ],
        },
      ],
      epilog: 'Exit codes: 0 ok, 1 failed (not delivered, port taken), 2 bad command line or message.',
    },
    helpWidth(),
  )
}

function findCommand(name: string): Command {
  return COMMANDS.find((command) => command.name === name) ?? usageError(`unknown command '${name}'`)
}

async function dispatch(argv: readonly string[]): Promise<ExitCode> {
  const [first, ...rest] = argv
  switch (first) {
    case undefined:
      // Nothing to do is a usage error, but the list of commands is the most useful answer.
      process.stderr.write(programHelp())
      return EXIT.usage
    case '-h':
    case '--help':
      process.stdout.write(programHelp())
      return EXIT.ok
    case '-V':
    case '--version':
      process.stdout.write(`${version}\n`)
      return EXIT.ok
    case 'help':
      process.stdout.write(rest[0] === undefined ? programHelp() : findCommand(rest[0]).help(helpWidth()))
      return EXIT.ok
    default:
      if (first.startsWith('-')) usageError(`unknown option '${first}'`)
      return findCommand(first).run(rest, helpWidth())
  }
}

/**
 * Runs the `eventwire` command line and resolves with its exit code (see {@link EXIT}); `dev` and
 * `listen` resolve when stopped with Ctrl+C or SIGTERM.
 */
export async function run(argv: readonly string[]): Promise<ExitCode> {
  try {
    return await dispatch(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    process.stderr.write(`error: ${error.message}\n(add --help for usage)\n`)
    return EXIT.usage
  }
}
