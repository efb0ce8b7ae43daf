import type { Attributes } from '@opentelemetry/api'
import type { AttemptNotice } from '../delivery/result.js'

/** The attribute names eventwire sets beside OpenTelemetry's own (`server.address`, `http.*`). */
export const ATTR = {
  url: 'eventwire.webhook.url',
  outcome: 'eventwire.webhook.outcome',
  statusClass: 'eventwire.webhook.status_class',
  queueState: 'eventwire.webhook.queue.state',
  circuitState: 'eventwire.webhook.circuit.state',
  heldReason: 'eventwire.webhook.held.reason',
  destination: 'eventwire.webhook.destination',
} as const

/** Distinct `eventwire.webhook.destination` values one instrumentation gives at most; the others are {@link OTHER_DESTINATIONS}. */
export const MAX_DESTINATION_LABELS = 100

/** The `eventwire.webhook.destination` value of every destination past {@link MAX_DESTINATION_LABELS}. */
export const OTHER_DESTINATIONS = '_other'

/**
 * The `eventwire.webhook.destination` attribute, added to attributes made elsewhere: the user's
 * label of a registry destination, at most {@link MAX_DESTINATION_LABELS} distinct values (a
 * metrics backend keeps a series per value, and a platform may have many thousand destinations).
 * Each labelled set of attributes is made once.
 */
export class DestinationAttributes {
  readonly #label: (destination: string) => string | undefined
  /** Each destination's label, as first given; for at most ten times as many destinations as values, the others asked each time. */
  readonly #labels = new Map<string, string | undefined>()
  readonly #values = new Set<string>()
  readonly #made = new WeakMap<Attributes, Map<string, Attributes>>()

  constructor(label: (destination: string) => string | undefined) {
    this.#label = label
  }

  /** `base`, with the destination's label when it has one. */
  with(base: Attributes, destination: string | undefined): Attributes {
    if (destination === undefined) return base
    const label = this.#labelOf(destination)
    if (label === undefined) return base
    let labelled = this.#made.get(base)
    if (labelled === undefined) {
      labelled = new Map()
      this.#made.set(base, labelled)
    }
    let made = labelled.get(label)
    if (made === undefined) {
      made = { ...base, [ATTR.destination]: label }
      labelled.set(label, made)
    }
    return made
  }

  #labelOf(destination: string): string | undefined {
    if (this.#labels.has(destination)) return this.#labels.get(destination)
    const given = this.#label(destination)
    const label =
      typeof given !== 'string'
        ? undefined
        : this.#values.has(given) || this.#values.size < MAX_DESTINATION_LABELS
          ? given
          : OTHER_DESTINATIONS
    if (label !== undefined) this.#values.add(label)
    if (this.#labels.size < MAX_DESTINATION_LABELS * 10) this.#labels.set(destination, label)
    return label
  }
}

/** What an attempt's answer was, in few values: `2xx` to `5xx`, or what failed below HTTP. */
export type StatusClass =
  | '1xx'
  | '2xx'
  | '3xx'
  | '4xx'
  | '5xx'
  | 'timeout'
  | 'network'
  | 'tls'
  | 'blocked'
  | 'proxy'
  | 'other'

/** Transport failures by their error code; a status of any kind wins over these. */
const FAILURE_CLASSES: Readonly<Record<string, StatusClass>> = {
  ERR_TIMEOUT: 'timeout',
  ERR_NETWORK: 'network',
  ERR_TLS_CERTIFICATE: 'tls',
  ERR_BLOCKED_TARGET: 'blocked',
  ERR_PROXY: 'proxy',
}

/** The status class of one attempt. */
export function statusClass(notice: AttemptNotice): StatusClass {
  if (notice.status !== undefined && notice.status >= 100 && notice.status < 600) {
    return `${Math.floor(notice.status / 100)}xx` as StatusClass
  }
  return FAILURE_CLASSES[notice.error?.code ?? ''] ?? 'other'
}

/** The attributes of an attempt's two measurements: its count, and its request's duration. */
export interface AttemptAttributes {
  readonly attempt: Attributes
  readonly request: Attributes
}

/**
 * The attributes that name one configured URL: `server.address` and `server.port` always (as
 * OpenTelemetry's HTTP client conventions have them), `eventwire.webhook.url` when the user maps
 * URLs to labels (a URL's path or query often carries a secret), and the user's own. Made once
 * per URL: every measurement of that URL shares them.
 */
export class UrlAttributes {
  readonly #byUrl = new Map<string, Attributes>()
  /** By URL, status, code and outcome: a few dozen at most per URL, made once each. */
  readonly #attempts = new Map<string, AttemptAttributes>()
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

  /**
   * An attempt's attributes: its URL's, with its outcome and status class on the count, and on
   * the request's duration those of OpenTelemetry's HTTP client conventions.
   */
  ofAttempt(notice: AttemptNotice): AttemptAttributes {
    const { url, status, accepted } = notice
    const code = notice.error?.code
    const key = `${url}\n${status ?? ''}\n${code ?? ''}\n${accepted}`
    let made = this.#attempts.get(key)
    if (made === undefined) {
      const server = this.of(url)
      const request: Attributes = { ...server, 'http.request.method': 'POST' }
      if (status !== undefined) request['http.response.status_code'] = status
      // The conventions' rule: a status of 400 or more is the error type; with no answer, what failed.
      if (status !== undefined ? status >= 400 : code !== undefined) {
        request['error.type'] = status !== undefined ? String(status) : (code ?? '_OTHER')
      }
      const attempt = {
        ...server,
        [ATTR.outcome]: accepted ? 'accepted' : 'failed',
        [ATTR.statusClass]: statusClass(notice),
      }
      made = { attempt, request }
      this.#attempts.set(key, made)
    }
    return made
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
