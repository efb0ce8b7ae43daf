// The Standard Webhooks scheme (standardwebhooks.com): what it signs, how its secrets are written,
// and its headers. Web APIs only: the sender and every receiver share it.

/** The prefix of a Standard Webhooks secret as people are given it. */
export const SECRET_PREFIX = 'whsec_'

/** A secret's key is 24 to 64 random bytes (192 to 512 bits), as the specification requires. */
const MIN_KEY_BYTES = 24
const MAX_KEY_BYTES = 64

/** Canonical base64 (padding included): what `whsec_` secrets are written in. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/**
 * Why `secret` is not a Standard Webhooks secret (for the caller's error), or `undefined` when it
 * is one: `whsec_`, then base64 of 24 to 64 bytes.
 */
export function whyNotStandardSecret(secret: unknown): string | undefined {
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) {
    return `expected a Standard Webhooks secret: ${SECRET_PREFIX} followed by base64, such as one from generateStandardSecret()`
  }
  const encoded = secret.slice(SECRET_PREFIX.length)
  if (!BASE64.test(encoded)) return `the part after ${SECRET_PREFIX} is not base64`
  const bytes = (encoded.length / 4) * 3 - (encoded.match(/=+$/)?.[0].length ?? 0)
  if (bytes < MIN_KEY_BYTES || bytes > MAX_KEY_BYTES) {
    return `its key is ${bytes} bytes; Standard Webhooks keys are ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`
  }
  return undefined
}

/** The key of a secret {@link whyNotStandardSecret} accepts: the bytes its base64 writes. */
export function standardKey(secret: string): Uint8Array {
  return Uint8Array.from(atob(secret.slice(SECRET_PREFIX.length)), (char) => char.charCodeAt(0))
}

/** Base64 of bytes, as signatures and secrets are written. */
export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** What is signed: the message id, the attempt's Unix time in seconds and the body, joined by dots. */
export function signedContent(id: string, timestamp: string, body: string): string {
  return `${id}.${timestamp}.${body}`
}

/** The attempt's time as the `webhook-timestamp` header carries it: whole Unix seconds. */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000)
}

/**
 * A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64, from the platform's
 * cryptographic random source. Give the same string to the sender (`standardSecret`) and to
 * each receiver.
 *
 * @example
 * ```ts
 * import { generateStandardSecret } from 'eventwire/webhook'
 *
 * console.log(generateStandardSecret()) // whsec_ followed by 44 base64 characters
 * ```
 */
export function generateStandardSecret(): string {
  return `${SECRET_PREFIX}${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`
}
