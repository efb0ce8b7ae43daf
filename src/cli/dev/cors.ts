import type { IncomingHttpHeaders } from 'node:http'
import { InvalidArgumentError } from '../arguments.js'

/**
 * Which browser origins may send to the ingest API: `*` for any (the default: on a developer's
 * machine the page is usually on another port, so another origin), or a list of exact origins.
 */
export type CorsOrigins = readonly string[]

/** Headers a browser may send with a batch: the Basic auth and the JSON content type need its leave. */
const ALLOWED_HEADERS = 'authorization, content-type, content-encoding'

/** The answer to a request's `Origin`: headers to add, or `undefined` when the origin may not send. */
export function corsHeaders(
  origin: string | undefined,
  allowed: CorsOrigins,
): Readonly<Record<string, string>> | undefined {
  // No Origin: not a browser's cross-origin request, nothing to allow.
  if (origin === undefined) return {}
  if (allowed.includes('*')) return { 'access-control-allow-origin': '*' }
  if (!allowed.includes(origin)) return undefined
  // The answer depends on the Origin: caches must keep one per origin.
  return { 'access-control-allow-origin': origin, vary: 'Origin' }
}

/**
 * The answer to a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`): what a browser
 * needs before a batch that carries `Authorization` or JSON's content type. `undefined` for an
 * origin that may not send. A page on a public address asking for a private one (Chromium's
 * Private Network Access) is told yes as well: that is what a local development server is for.
 */
export function preflightHeaders(
  headers: IncomingHttpHeaders,
  allowed: CorsOrigins,
): Readonly<Record<string, string>> | undefined {
  const origin = corsHeaders(headers.origin, allowed)
  if (origin === undefined) return undefined
  return {
    ...origin,
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': ALLOWED_HEADERS,
    'access-control-max-age': '600',
    ...(headers['access-control-request-private-network'] === 'true'
      ? { 'access-control-allow-private-network': 'true' }
      : {}),
  }
}

/**
 * Parses a `--cors-origin` value onto those given before it: `*`, or an origin as browsers send it
 * (`scheme://host[:port]`, no path).
 */
export function corsOriginArgument(value: string, previous: CorsOrigins = []): string[] {
  if (value !== '*') {
    let origin: string
    try {
      origin = new URL(value).origin
    } catch {
      throw new InvalidArgumentError('expected * or an origin such as http://localhost:3000.')
    }
    if (origin !== value) {
      throw new InvalidArgumentError(
        `expected an origin as browsers send it: scheme://host[:port], without path or trailing slash${origin === 'null' ? '' : ` (${origin})`}.`,
      )
    }
  }
  return [...previous, value]
}
