import { BLOCKED_ADDRESS_CODE } from './address-guard.js'

/** The code of every error an egress proxy's own failure ends an attempt with, for {@link classifyFailure}. */
export const PROXY_FAILURE_CODE = 'ERR_EVENTWIRE_PROXY'

/**
 * What went wrong below HTTP. `blocked`: the address is not allowed (`blockPrivateNetworks`).
 * `proxy`: the egress proxy failed (unreachable, or it refused to open the tunnel), not the receiver.
 */
export type TransportFailure = 'timeout' | 'network' | 'tls' | 'blocked' | 'proxy'

/** Certificate errors (Node's, undici's and Bun's codes): the TLS handshake failed before any HTTP. */
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
])

/**
 * Deno's fetch names certificate failures only in the message of the error's cause (rustls:
 * `invalid peer certificate: UnknownIssuer`, `Expired`, `NotValidForName`...). Bun uses Node's codes.
 */
const DENO_TLS_MESSAGE = /\binvalid peer certificate\b/

const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
])

/** Reads a thrown error and its `cause` chain for a certificate failure, a refused address or a timeout. */
export function classifyFailure(error: unknown): TransportFailure {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    const { code, name, message } = current as { code?: unknown; name?: unknown; message?: unknown }
    if (
      (typeof code === 'string' && TLS_CODES.has(code)) ||
      (typeof message === 'string' && DENO_TLS_MESSAGE.test(message))
    )
      return 'tls'
    if (code === BLOCKED_ADDRESS_CODE) return 'blocked'
    if (code === PROXY_FAILURE_CODE) return 'proxy'
    if ((typeof code === 'string' && TIMEOUT_CODES.has(code)) || name === 'TimeoutError') return 'timeout'
    current = (current as { cause?: unknown }).cause
  }
  return 'network'
}
