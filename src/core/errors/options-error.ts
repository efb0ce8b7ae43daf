import { EventwireError } from './eventwire-error.js'

/** Thrown by a constructor given an option it cannot use. */
export class OptionsError extends EventwireError<'ERR_INVALID_OPTION'> {
  /** The option's name, e.g. `flushAt` or `webhooks[2].url`. */
  readonly option: string

  constructor(option: string, message: string, options?: { cause?: unknown }) {
    super('ERR_INVALID_OPTION', `Invalid option \`${option}\`: ${message}`, options)
    this.option = option
  }
}
