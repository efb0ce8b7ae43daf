/** Largest message, in UTF-8 bytes of its JSON (the Go client v3's `maxMessageBytes`). */
export const MAX_MESSAGE_BYTES = 32_000

/** Largest batch request body, in UTF-8 bytes (the Go client v3's `maxBatchBytes`). */
export const MAX_BATCH_BYTES = 500_000
