import { ValidationError } from './errors/validation-error.js'

/** A message, or any object that names its `type` (a webhook payload): what {@link serializeMessage} takes. */
export interface TypedRecord {
  readonly type: string
  readonly [field: string]: unknown
}

/** Names the first top-level field JSON cannot encode, for a message that says where to look. */
function findUnserializableField(wire: TypedRecord): string {
  for (const [name, value] of Object.entries(wire)) {
    try {
      JSON.stringify(value)
    } catch {
      return name
    }
  }
  return 'message'
}

/**
 * Serializes a wire message once, at call time: the JSON string is a snapshot, so later changes to
 * the caller's objects are not sent.
 *
 * @throws {@link ValidationError} `ERR_NOT_SERIALIZABLE` for circular structures or `BigInt` values,
 * and for a `toJSON` that throws or returns either.
 */
export function serializeMessage(wire: TypedRecord): string {
  try {
    return JSON.stringify(wire)
  } catch (cause) {
    const field = findUnserializableField(wire)
    throw new ValidationError(
      'ERR_NOT_SERIALIZABLE',
      field,
      `${wire.type}(): \`${field}\` cannot be encoded as JSON (${cause instanceof Error ? cause.message : String(cause)}).`,
      { cause },
    )
  }
}
