import { Pool } from 'undici'
import { classifyFailure, type WebhookTransport } from './transport.js'

/** Options of {@link createUndiciTransport}. */
export interface UndiciTransportOptions {
  /** Connections per receiving origin. @defaultValue 64 */
  connections?: number
  /** TLS and socket options, e.g. `{ ca }` for receivers behind a private certificate authority. */
  connect?: Pool.Options['connect']
}

/**
 * Sends webhook requests with undici's `Pool.request`, one keep-alive pool per receiving origin:
 * the Node default, several times faster per request than `fetch`. Redirects are not followed.
 *
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs'
 * const transport = createUndiciTransport({ connect: { ca: readFileSync('private-ca.pem') } })
 * new WebhookDestination({ webhooks, transport })
 * ```
 */
export function createUndiciTransport(options: UndiciTransportOptions = {}): WebhookTransport {
  const pools = new Map<string, Pool>()
  const poolFor = (origin: string): Pool => {
    let pool = pools.get(origin)
    if (!pool) {
      pool = new Pool(origin, { connections: options.connections ?? 64, ...(options.connect ? { connect: options.connect } : {}) })
      pools.set(origin, pool)
    }
    return pool
  }
  return {
    async send(request) {
      try {
        const response = await poolFor(request.origin).request({
          method: 'POST',
          path: request.path,
          headers: request.headers,
          body: request.body,
          headersTimeout: request.timeoutMs,
          bodyTimeout: request.timeoutMs,
        })
        await response.body.dump()
        const retryAfter = response.headers['retry-after']
        return { ok: true, status: response.statusCode, retryAfter: typeof retryAfter === 'string' ? retryAfter : null }
      } catch (cause) {
        return { ok: false, failure: classifyFailure(cause), cause }
      }
    },
    async close() {
      await Promise.all(Array.from(pools.values(), (pool) => pool.close()))
      pools.clear()
    },
  }
}
