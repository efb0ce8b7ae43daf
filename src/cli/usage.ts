import { EventwireError } from '../index.js'
import { withoutCredentials } from './redact.js'

/**
 * The command line is wrong and nothing was attempted: the program prints the message on stderr
 * with a pointer to `--help`, and exits 2.
 */
export class UsageError extends Error {}

/** Stops the command with a {@link UsageError}. */
export function usageError(message: string): never {
  throw new UsageError(message)
}

/**
 * Builds something from the user's options; an option the library refuses (an `EventwireError`) is
 * a usage error. Its message is printed without URL credentials, whichever part of the library
 * wrote it: a terminal's scrollback and CI logs are no place for a password.
 */
export function fromOptions<T>(build: () => T): T {
  try {
    return build()
  } catch (error) {
    if (error instanceof EventwireError) usageError(withoutCredentials(error.message))
    throw error
  }
}
