import { Command, CommanderError } from 'commander'
import { LIBRARY } from '../core/version.js'
import { registerDev } from './dev/command.js'
import { EXIT, type ExitCode } from './exit-codes.js'
import { registerListen } from './listen/command.js'
import { registerSend } from './send/command.js'

/**
 * Runs the `eventwire` command line and resolves with its exit code (see {@link EXIT}); `dev` and
 * `listen` resolve when stopped with Ctrl+C or SIGTERM.
 */
export async function run(argv: readonly string[]): Promise<ExitCode> {
  let code: ExitCode = EXIT.ok
  const exit = (result: ExitCode) => (code = result)
  const program = new Command('eventwire')
    .description('A local platform for eventwire: an ingest API that forwards to webhooks, a webhook receiver, and one-off calls.')
    .version(LIBRARY.version)
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', '\nExit codes: 0 ok, 1 failed (not delivered, port taken), 2 bad command line or message.')
  registerDev(program, exit)
  registerListen(program, exit)
  registerSend(program, exit)
  try {
    await program.parseAsync(argv, { from: 'user' })
  } catch (error) {
    // Help and version end with exit code 0; every other commander error is a usage error.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage
    throw error
  }
  return code
}
