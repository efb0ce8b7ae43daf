import type { Attributes } from '@opentelemetry/api'
import type { AttemptNotice } from '../result.js'

/** The attribute names eventwire sets beside OpenTelemetry's own (`server.address`, `http.*`). */
export const ATTR = {
  url: 'eventwire.webhook.url',
  outcome: 'eventwire.webhook.outcome',
  statusClass: 'eventwire.webhook.status_class',
  queueState: 'eventwire.webhook.queue.state',
  circuitState: 'eventwire.webhook.circuit.state',
} as const

/** What an attempt's answer was, in few values: `2xx` to `5xx`, or what failed below HTTP. */
export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'network' | 'tls' | 'blocked' | 'other'

/** Transport failures by their error code; a status of any kind wins over these. */
const FAILURE_CLASSES: Readonly<Record<string, StatusClass>> = {
  ERR_TIMEOUT: 'timeout',
  ERR_NETWORK: 'network',
  ERR_TLS_CERTIFICATE: 'tls',
  ERR_BLOCKED_TARGET: 'blocked',
}

/** The status class of one attempt. */
export function statusClass(notice: AttemptNotice): StatusClass {
  if (notice.status !== undefined && notice.status >= 100 && notice.status < 600) {
    return `${Math.floor(notice.status / 100)}xx` as StatusClass
  }
  return FAILURE_CLASSES[notice.error?.code ?? ''] ?? 'other'
}

/**
 * The attributes that name one configured URL: `server.address` and `server.port` always (as
 * OpenTelemetry's HTTP client conventions have them), `eventwire.webhook.url` when the user maps
 * URLs to labels (a URL's path or query often carries a secret), and the user's own. Made once
 * per URL: every measurement of that URL shares them.
 */
export class UrlAttributes {
  readonly #byUrl = new Map<string, Attributes>()
  readonly #label: ((url: string) => string | undefined) | undefined
  readonly #common: Attributes

  constructor(label: ((url: string) => string | undefined) | undefined, common: Attributes) {
    this.#label = label
    this.#common = common
  }

  of(url: string): Attributes {
    let attributes = this.#byUrl.get(url)
    if (attributes === undefined) {
      attributes = { ...this.#common, ...serverOf(url) }
      const label = this.#label?.(url)
      if (label !== undefined) attributes[ATTR.url] = label
      this.#byUrl.set(url, attributes)
    }
    return attributes
  }
}

/** `server.address` (an IPv6 address without its brackets) and `server.port` (the scheme's default when the URL has none). */
function serverOf(url: string): Attributes {
  try {
    const parsed = new URL(url)
    const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port)
    return { 'server.address': parsed.hostname.replace(/^\[(.*)\]$/, '$1'), 'server.port': port }
  } catch {
    // Only configured URLs come here, and they parsed when the engine was made; kept whole just in case.
    return { 'server.address': url }
  }
}
