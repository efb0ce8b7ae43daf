import { importSigningKey, signWithKey } from './signature.js'

/** Computes the `X-Signature` of a body's UTF-8 bytes: lowercase hex HMAC-SHA1 keyed with the shared secret. */
export type Signer = (body: string) => string | Promise<string>

/** A {@link Signer} on Web Crypto, with the key imported once: runs everywhere. */
export function createWebCryptoSigner(secret: string): Signer {
  const key = importSigningKey(secret)
  return async (body) => signWithKey(await key, body)
}
