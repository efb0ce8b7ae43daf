import { EventwireError, type ErrorCode } from './eventwire-error.js'

/** Codes of {@link ValidationError}: which rule a call broke. */
export type ValidationErrorCode = Extract<
  ErrorCode,
  `ERR_MISSING_${string}` | 'ERR_INVALID_FIELD' | 'ERR_NOT_SERIALIZABLE' | 'ERR_PLAN_VIOLATION' | 'ERR_MIDDLEWARE'
>

/**
 * Thrown synchronously by a call whose message breaks a rule. Nothing was queued.
 * `ERR_PLAN_VIOLATION`: the call breaks the client's tracking plan (`field` is the path the
 * schema named, e.g. `properties.total`, or `event` for a name the plan does not have).
 * `ERR_MIDDLEWARE`: a middleware threw on the call (the message names it; `cause` is what it threw).
 */
export class ValidationError extends EventwireError<ValidationErrorCode> {
  /** The wire name of the offending field, e.g. `event` or `properties`. */
  readonly field: string

  constructor(code: ValidationErrorCode, field: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options)
    this.field = field
  }
}
