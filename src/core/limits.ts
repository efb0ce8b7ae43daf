/** Largest message, in UTF-8 bytes of its JSON (the Go client v3's `maxMessageBytes`). */
export const MAX_MESSAGE_BYTES = 32_000

/** Largest batch request body, in UTF-8 bytes (the Go client v3's `maxBatchBytes`). */
export const MAX_BATCH_BYTES = 500_000

/**
 * Most bytes of a response body read, by the client and by the webhook transports alike. Only the
 * status (and `Retry-After`) decide; the body is read up to this so that its connection can be
 * reused, and a longer one is let go with its connection.
 */
export const RESPONSE_BODY_CAP = 64 * 1024
