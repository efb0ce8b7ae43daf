import { EventwireError } from './eventwire-error.js'

/** Thrown by a call made after `close()`. Nothing was queued. */
export class ClosedError extends EventwireError<'ERR_CLOSED'> {
  constructor(what: string) {
    super('ERR_CLOSED', `Cannot ${what}: close() was called. Create a new instance to send more.`)
  }
}
