import type { Command } from 'commander'
import { EventwireError } from '../core/errors/eventwire-error.js'
import { EXIT } from './exit-codes.js'

/** Stops the command as commander stops on a bad option: the message on stderr, exit code 2. */
export function usageError(command: Command, message: string): never {
  command.error(`error: ${message}`, { exitCode: EXIT.usage })
}

/** Builds something from the user's options; an option the library refuses (an `EventwireError`) is a usage error. */
export function fromOptions<T>(command: Command, build: () => T): T {
  try {
    return build()
  } catch (error) {
    if (error instanceof EventwireError) usageError(command, error.message)
    throw error
  }
}
