/** A raw request body: the exact bytes received or sent. */
export type RawBody = string | Uint8Array | ArrayBuffer

const encoder = new TextEncoder()
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

function toBytes(body: RawBody): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body)
  return body instanceof Uint8Array ? body : new Uint8Array(body)
}

/** Lowercase hex of bytes, as `X-Signature` is written. */
export function toHex(bytes: Uint8Array): string {
  let hex = ''
  for (const byte of bytes) hex += HEX[byte]
  return hex
}

/**
 * Imports an HMAC key once (a string secret as its UTF-8 bytes); a destination keeps the promise
 * for all its requests. Not extractable: the key cannot be read back out.
 */
export function importSigningKey(secret: string | Uint8Array, hash: 'SHA-1' | 'SHA-256' = 'SHA-1'): Promise<CryptoKey> {
  const bytes = typeof secret === 'string' ? encoder.encode(secret) : secret
  return crypto.subtle.importKey('raw', bytes as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash }, false, ['sign'])
}

/** The HMAC of the body's bytes (a string as UTF-8) with an imported key. */
export async function hmacWithKey(key: CryptoKey, body: RawBody): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, toBytes(body) as Uint8Array<ArrayBuffer>))
}

/** Lowercase hex HMAC-SHA1 of the body's bytes (a string as UTF-8) with an imported key. */
export async function signWithKey(key: CryptoKey, body: RawBody): Promise<string> {
  return toHex(await hmacWithKey(key, body))
}

/**
 * The `X-Signature` value for a body: lowercase hex HMAC-SHA1 keyed with the shared secret, over
 * the body's UTF-8 bytes. Web Crypto only: runs in Node, browsers, Deno, Bun and Workers.
 *
 * @example
 * ```ts
 * import { signPayload, verifySignature } from 'eventwire/webhook'
 *
 * const body = '{"type":"track","userId":"u1","event":"Paid"}'
 * const signature = await signPayload(body, 's3cret') // 40 lowercase hex characters
 * console.log(await verifySignature(body, signature, 's3cret')) // true
 * ```
 */
export async function signPayload(body: RawBody, secret: string): Promise<string> {
  return signWithKey(await importSigningKey(secret), body)
}

/**
 * Checks an `X-Signature` header against the body as received. Pass the raw bytes: a body that
 * was parsed and re-serialized (e.g. `JSON.stringify(req.body)`) rarely has the same bytes, and
 * its signature will not match.
 *
 * Accepts upper- or lowercase hex, compares in constant time, and resolves `false` (never throws,
 * never rejects) for a missing, empty or malformed signature and for anything it cannot check: a
 * body that is not a string, `Uint8Array` or `ArrayBuffer`, or whose buffer was detached
 * (transferred by `postMessage` or `structuredClone`). An array of header values (a repeated header) is
 * accepted only when it holds exactly one value.
 *
 * @example
 * ```ts
 * import { verifySignature } from 'eventwire/webhook'
 *
 * // A fetch handler (Workers, Deno, Bun; Node behind any fetch adapter).
 * export async function handle(request: Request, secret: string): Promise<Response> {
 *   const rawBody = await request.arrayBuffer() // the exact bytes that were signed
 *   if (!(await verifySignature(rawBody, request.headers.get('x-signature'), secret))) {
 *     return new Response('bad signature', { status: 401 })
 *   }
 *   const event = JSON.parse(new TextDecoder().decode(rawBody)) // parse only once verified
 *   console.log('received', event.type)
 *   return new Response(null, { status: 204 })
 * }
 * ```
 */
export async function verifySignature(
  body: RawBody,
  signature: string | readonly string[] | null | undefined,
  secret: string,
): Promise<boolean> {
  // Whatever arrives (a proxy that throws, a buffer detached by postMessage), the answer is a boolean.
  try {
    const given = Array.isArray(signature) ? (signature.length === 1 ? signature[0] : undefined) : signature
    // A secret must be a string: TextEncoder would read a number as its digits.
    if (typeof given !== 'string' || typeof secret !== 'string') return false
    const bytes = checkableBytes(body)
    // The expected value is 40 lowercase hex digits, so anything else (another length, not hex)
    // fails the comparison; an empty secret fails at importKey (Web Crypto refuses a zero-length
    // HMAC key) and resolves false through the catch.
    return bytes !== undefined && constantTimeEqual(await signPayload(bytes, secret), given.toLowerCase())
  } catch {
    return false
  }
}

/**
 * The body as something Web Crypto can hash, or `undefined` when it cannot be checked: not a
 * {@link RawBody}, or a buffer that was detached (transferred), whose bytes are gone, though a view
 * on it reads as empty. A view on a `SharedArrayBuffer` is copied: Web Crypto refuses shared memory,
 * and a copy is a snapshot another thread cannot change mid-hash.
 */
export function checkableBytes(body: unknown): string | Uint8Array | undefined {
  if (typeof body === 'string') return body
  const buffer = body instanceof Uint8Array ? body.buffer : body instanceof ArrayBuffer ? body : undefined
  if (buffer === undefined || isDetached(buffer)) return undefined
  if (body instanceof ArrayBuffer) return new Uint8Array(body)
  const view = body as Uint8Array
  return buffer instanceof ArrayBuffer ? view : view.slice()
}

/** Whether a buffer was transferred away: making a view on it throws then (`ArrayBuffer#detached` is not in Node 20). */
function isDetached(buffer: ArrayBufferLike): boolean {
  try {
    new Uint8Array(buffer, 0, 0)
    return false
  } catch {
    return true
  }
}

/**
 * Compares two strings in time that depends on their length only, not on where they differ, so a
 * forger cannot find a signature one character at a time by timing.
 */
export function constantTimeEqual(expected: string, actual: string): boolean {
  if (expected.length !== actual.length) return false
  let difference = 0
  for (let index = 0; index < expected.length; index++) {
    difference |= expected.charCodeAt(index) ^ actual.charCodeAt(index)
  }
  return difference === 0
}
