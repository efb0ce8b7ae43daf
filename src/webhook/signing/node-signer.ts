import { createHmac } from 'node:crypto'
import type { HmacFormat, Signer } from './signer.js'

/**
 * A {@link Signer} on `node:crypto`: synchronous, and several times cheaper per event on Node
 * than a Web Crypto round trip. Same digest, same encoding.
 */
export function createNodeSigner(format: HmacFormat, secret: string | Uint8Array): Signer {
  const [hash, encoding] = format === 'sha1-hex' ? (['sha1', 'hex'] as const) : (['sha256', 'base64'] as const)
  return (data) =>
    (typeof data === 'string'
      ? createHmac(hash, secret).update(data, 'utf8')
      : createHmac(hash, secret).update(data)
    ).digest(encoding)
}
