import { hmacWithKey, importSigningKey, toHex } from './signature.js'
import { toBase64 } from './standard-webhooks.js'

/**
 * How a key signs: `X-Signature` is HMAC-SHA1 in lowercase hex, Standard Webhooks HMAC-SHA256 in
 * base64.
 */
export type HmacFormat = 'sha1-hex' | 'sha256-base64'

/**
 * Signs data (a string as its UTF-8 bytes) with one key: at once on node:crypto, in a promise on
 * Web Crypto.
 */
export type Signer = (data: string | Uint8Array) => string | Promise<string>

function encode(format: HmacFormat, bytes: Uint8Array): string {
  return format === 'sha256-base64' ? toBase64(bytes) : toHex(bytes)
}

/** A {@link Signer} on Web Crypto, with the key imported once: runs everywhere. */
export function createWebCryptoSigner(format: HmacFormat, secret: string | Uint8Array): Signer {
  const key = importSigningKey(secret, format === 'sha1-hex' ? 'SHA-1' : 'SHA-256')
  return async (data) => encode(format, await hmacWithKey(await key, data))
}

/**
 * One {@link Signer} over several keys (a secret rotation signs with each): each key's signature
 * in `shape`, joined by `separator`. Synchronous when every key's signer is.
 */
export function signWithEach(
  signers: readonly Signer[],
  shape: (signature: string) => string,
  separator: string,
): Signer {
  if (signers.length === 1) {
    const [only] = signers as [Signer]
    return (data) => {
      const signature = only(data)
      return typeof signature === 'string' ? shape(signature) : signature.then(shape)
    }
  }
  return (data) => {
    const signatures = signers.map((sign) => sign(data))
    if (signatures.every((signature) => typeof signature === 'string')) return signatures.map(shape).join(separator)
    return Promise.all(signatures).then((all) => all.map(shape).join(separator))
  }
}
