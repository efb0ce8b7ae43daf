import { OptionsError } from '../../core/errors/options-error.js'

/** Thrown by `destinations.set()` (BullMQ's registry or the in-memory one) when `ifVersion` is not the stored version. */
export class DestinationConflictError extends OptionsError {
  /** The version the registry holds (0: none). */
  readonly version: number

  constructor(id: string, expected: number, version: number) {
    super(
      'ifVersion',
      `destination ${JSON.stringify(id)} is at version ${version}, not ${expected}: someone changed it meanwhile. Read it again (get()) and apply your change to what it holds now.`,
    )
    this.version = version
  }
}
