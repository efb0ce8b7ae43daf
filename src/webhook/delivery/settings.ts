import { OptionsError } from '../../core/errors/options-error.js'
import {
  checkOptionNames,
  choiceOption,
  integerOption,
  parseHttpUrl,
  withoutCredentials,
} from '../../core/option-checks.js'
import { MAX_TIMER_MS } from '../../core/timers.js'
import { isObject } from '../../core/validate.js'
import { blockedRangeOf } from '../../core/private-address.js'
import { standardKey, whyNotStandardSecret } from '../signing/standard-webhooks.js'
import { BREAKER_DEFAULTS, type BreakerRules } from './circuit-breaker.js'
import type { WebhookTransport } from '../network/transport.js'
import type { ResolvedWebhook } from '../network/endpoint.js'

/** One receiving URL and the static headers added to every request sent to it. */
export interface WebhookEntry {
  /** Full URL including `http://` or `https://`, taken as entered (any path). */
  url: string
  /** Static headers for this URL, e.g. `{ 'X-Team': 'data' }`. */
  headers?: Record<string, string> | undefined
}

/** Settings of {@link WebhookDestination}. A setting set to `undefined` takes its default, as if left out. */
export interface WebhookSettings {
  /** 1 to 5 receiving URLs. */
  webhooks: readonly WebhookEntry[]
  /**
   * When set, every request carries `X-Signature`: the lowercase hex HMAC-SHA1 of the body keyed
   * with the secret (its UTF-8 bytes). Several secrets (a rotation): one signature each, joined by
   * commas, in the order given; receivers that take a list (`verifyWebhook`) accept any of them.
   */
  sharedSecret?: string | readonly string[] | undefined
  /**
   * Standard Webhooks secrets (`whsec_` and 24 to 64 bytes in base64; see
   * `generateStandardSecret`): every request carries `webhook-timestamp` (the attempt's Unix
   * seconds) and `webhook-signature`, a `v1,<base64 HMAC-SHA256>` of `{webhook-id}.{timestamp}.{body}`
   * per secret, space-separated, signed afresh on each retry. With `sharedSecret` too, requests
   * carry both schemes. Event ids may not contain `.` then (the specification's rule).
   */
  standardSecret?: string | readonly string[] | undefined
  /**
   * Time one attempt may take, in ms: connecting and the response headers, whose status decides.
   * The body (of which at most 64 KiB is read) must be in by then too, or its connection is closed.
   * @defaultValue 5_000
   */
  timeoutMs?: number | undefined
  /** No attempt starts later than this after the first one, in ms. @defaultValue 14_400_000 (4 hours) */
  retryWindowMs?: number | undefined
  /** Delay before retry number `attempt` (0-based), in ms. @defaultValue `5_000 * 2 ** attempt`, ±10% jitter */
  backoff?: ((attempt: number) => number) | undefined
  /**
   * `'any'` (the default): an event is processed once any URL accepts it; failed URLs are
   * retried only while no URL has accepted it. `'each'`: every URL is retried on its own until it
   * accepts the event. @defaultValue 'any'
   */
  mode?: 'any' | 'each' | undefined
  /** Requests in flight at once, over all URLs. @defaultValue 256 */
  maxConcurrency?: number | undefined
  /** Requests in flight at once to one URL. @defaultValue 64 */
  maxConcurrencyPerUrl?: number | undefined
  /**
   * Most deliveries one URL may hold: queued for a slot, in flight, or waiting for a retry. An
   * event that would pass it fails at that URL at once with `ERR_BACKLOG_FULL`; its other URLs go on.
   * @defaultValue 100_000
   */
  maxPendingPerUrl?: number | undefined
  /**
   * Each URL's circuit breaker: once, within the last `windowMs`, at least `failures` attempts
   * failed (no answer in time, no connection, an untrusted certificate, a 5xx) and they were at
   * least `failureRate` of the attempts, the URL's deliveries wait instead of spending attempts;
   * after `coolDownMs` one probe goes through, and its success closes the breaker. `false` turns
   * it off.
   * @defaultValue { failures: 10, failureRate: 0.5, windowMs: 10_000, coolDownMs: 30_000 }
   */
  breaker?:
    | {
        failures?: number | undefined
        failureRate?: number | undefined
        windowMs?: number | undefined
        coolDownMs?: number | undefined
      }
    | false
    | undefined
  /**
   * Deliveries a second to one URL on average, for receivers that ask to be spared (off by
   * default). Each URL gets its own budget; one that has been idle may take one second's worth at
   * once on top of the rate. What is over it waits in the URL's queue. The workers of a BullMQ
   * queue share each URL's budget through Redis.
   */
  ratePerUrl?: number | undefined
  /** How requests are sent. @defaultValue eventwire's HTTP/1.1 transport on Node, `fetch` elsewhere */
  transport?: WebhookTransport | undefined
  /**
   * Refuse targets that are not on the public internet (SSRF guard: loopback, private, link-local,
   * the other IANA special-purpose ranges, and IPv6 addresses that embed such an IPv4 address):
   * literal addresses at construction and again before connecting, and on Node every address a
   * host name resolves to, at connection time, with the default transport and any
   * `createHttp1Transport()`. Each request carries the setting, for a transport of your own to
   * honour. Off by default, because a platform may deliver to internal hosts on purpose.
   * @defaultValue false
   */
  blockPrivateNetworks?: boolean | undefined
}

/** Settings with defaults filled in. */
export interface ResolvedWebhookSettings {
  readonly webhooks: readonly ResolvedWebhook[]
  /** The `X-Signature` secrets, in order; none when unsigned. */
  readonly sharedSecrets: readonly string[]
  /** The keys of the Standard Webhooks secrets, in order; none without that scheme. */
  readonly standardKeys: readonly Uint8Array[]
  readonly timeoutMs: number
  readonly retryWindowMs: number
  readonly backoff: (attempt: number) => number
  readonly mode: 'any' | 'each'
  readonly maxConcurrency: number
  readonly maxConcurrencyPerUrl: number
  readonly maxPendingPerUrl: number
  /** `undefined` when the breaker is off. */
  readonly breaker: BreakerRules | undefined
  /** Deliveries a second to one URL; `undefined`: no limit. */
  readonly ratePerUrl: number | undefined
  readonly blockPrivateNetworks: boolean
  /** The transport the settings name; `undefined` leaves the choice to the platform. */
  readonly transport: WebhookTransport | undefined
}

/** The `User-Agent` every request carries: a fixed sender identifier with the version suffix `1.0`. */
export const USER_AGENT = 'eventwire-webhooks/1.0'

/** Most URLs a destination takes: at most five. */
export const MAX_WEBHOOKS = 5

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** Visible ASCII, spaces, tabs and obs-text: no CR, LF or NUL that could split a header. */
const FIELD_VALUE = /^[\t\u0020-\u007e\u0080-\u00ff]*$/
/** Headers eventwire sets itself or that would break the request if overridden. */
const RESERVED = new Set([
  'content-type',
  'content-length',
  'user-agent',
  'x-signature',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'host',
])
/**
 * Hop-by-hop and framing headers (RFC 9110 section 7.6.1, and `Expect`): they describe one
 * connection, not the event, and fetch (undici) refuses `Expect`, `Upgrade`, `Keep-Alive` and
 * `Transfer-Encoding` outright, so every request would fail.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
])

function defaultBackoff(attempt: number): number {
  return 5_000 * 2 ** attempt * (0.9 + Math.random() * 0.2)
}

/** Whether `value` is an object with a `send` method; a getter that throws while we look means no. */
function isTransport(value: unknown): value is WebhookTransport {
  if (typeof value !== 'object') return false
  // Stryker disable next-line ConditionalExpression: reading send of null throws and is caught below, with the same answer.
  if (value === null) return false
  try {
    return typeof (value as WebhookTransport).send === 'function'
  } catch {
    return false
  }
}

/** Every setting of {@link WebhookSettings} and {@link WebhookEntry}; a key missing here fails to compile. */
const SETTING_NAMES: Readonly<Record<keyof WebhookSettings, true>> = {
  webhooks: true,
  sharedSecret: true,
  standardSecret: true,
  timeoutMs: true,
  retryWindowMs: true,
  backoff: true,
  mode: true,
  maxConcurrency: true,
  maxConcurrencyPerUrl: true,
  maxPendingPerUrl: true,
  breaker: true,
  ratePerUrl: true,
  transport: true,
  blockPrivateNetworks: true,
}
/** The settings of {@link SETTING_NAMES} but `left`: what an engine that leaves those out takes. */
export function settingNamesWithout(...left: Array<keyof WebhookSettings>): Readonly<Record<string, true>> {
  const names: Record<string, true> = { ...SETTING_NAMES }
  for (const name of left) delete names[name]
  return names
}
const ENTRY_NAMES: Readonly<Record<keyof WebhookEntry, true>> = { url: true, headers: true }
/** Names people reach for, mapped to ours. */
const LIKELY_NAMES: Readonly<Record<string, string>> = {
  urls: 'webhooks',
  secret: 'sharedSecret',
  timeout: 'timeoutMs',
  retryWindow: 'retryWindowMs',
  concurrency: 'maxConcurrency',
}

/** One entry of a `webhooks` list, checked; `name` is how errors name it (`webhooks[0]`). */
export function resolveEntry(entry: unknown, index: number, name = `webhooks[${index}]`): ResolvedWebhook {
  if (!isObject(entry))
    throw new OptionsError(
      name,
      // The string may be a URL with a password: it is not repeated.
      typeof entry === 'string'
        ? 'expected { url, headers? }, got a string: give it as { url }.'
        : 'expected { url, headers? }.',
    )
  checkOptionNames(entry, ENTRY_NAMES, {}, `${name}.`)
  const raw = entry['url']
  const url = parseHttpUrl(raw)
  if (!url) {
    // What was given may be a URL with a password that does not parse: quote it without credentials.
    throw new OptionsError(
      `${name}.url`,
      `expected a full http:// or https:// URL, got ${withoutCredentials(String(JSON.stringify(raw)))}.`,
    )
  }
  if (url.username || url.password) {
    throw new OptionsError(`${name}.url`, 'credentials in the URL are not sent; use a static Authorization header.')
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': USER_AGENT }
  const given = entry['headers']
  if (given !== undefined) {
    if (!isObject(given)) throw new OptionsError(`${name}.headers`, 'expected an object of header names to values.')
    for (const [key, value] of Object.entries(given)) {
      if (!TOKEN.test(key))
        throw new OptionsError(`${name}.headers`, `${JSON.stringify(key)} is not a valid header name.`)
      if (RESERVED.has(key.toLowerCase())) {
        throw new OptionsError(`${name}.headers`, `${key} is set by eventwire and cannot be configured.`)
      }
      if (HOP_BY_HOP.has(key.toLowerCase())) {
        throw new OptionsError(
          `${name}.headers`,
          `${key} is a hop-by-hop or framing header: the connection's business, not the receiver's. Leave it out.`,
        )
      }
      if (typeof value !== 'string' || !FIELD_VALUE.test(value)) {
        throw new OptionsError(
          `${name}.headers`,
          `the value of ${key} must be a string without CR, LF or other control characters.`,
        )
      }
      headers[key.toLowerCase()] = value
    }
  }
  return { url: url.href, origin: url.origin, path: `${url.pathname}${url.search}`, headers }
}

/**
 * Checks destination settings and fills in defaults.
 *
 * @param takes - The settings the engine takes, when not all of them: an unknown name is answered
 *   with these, never with one the engine would refuse next.
 * @throws {@link OptionsError} naming the first setting it cannot use.
 */
export function resolveWebhookSettings(
  settings: unknown,
  takes: Readonly<Record<string, true>> = SETTING_NAMES,
  ownWebhooks: 'required' | 'optional' = 'required',
): ResolvedWebhookSettings {
  if (!isObject(settings)) throw new OptionsError('settings', 'expected an object with `webhooks`.')
  checkOptionNames(settings, takes, LIKELY_NAMES)
  const given = settings['webhooks']
  const none = given === undefined && ownWebhooks === 'optional'
  if (none) {
    // A worker that serves only the destinations of the registry: what signs and routes is theirs.
    for (const name of ['sharedSecret', 'standardSecret', 'mode'] as const) {
      if (settings[name] !== undefined)
        throw new OptionsError(
          name,
          "applies to the engine's own `webhooks`, and it has none: each destination of the registry has its own. Leave it out, or give the engine `webhooks`.",
        )
    }
  } else checkWebhookCount(given)
  const webhooks: unknown[] = none ? [] : (given as unknown[])
  const { sharedSecrets, standardKeys } = signingSecrets(settings)
  const backoff = settings['backoff']
  if (backoff !== undefined && typeof backoff !== 'function')
    throw new OptionsError('backoff', 'expected (attempt) => ms.')
  const block = settings['blockPrivateNetworks'] ?? false
  if (typeof block !== 'boolean') throw new OptionsError('blockPrivateNetworks', 'expected true or false.')
  const mode = choiceOption('mode', settings['mode'], ['any', 'each']) ?? 'any'
  const resolved = webhooks.map((entry, index) => resolveEntry(entry, index))
  refuseRepeatedUrls(resolved)
  if (block) {
    resolved.forEach((webhook, index) => {
      const host = new URL(webhook.url).hostname
      const range = blockedRangeOf(host)
      if (range !== undefined) {
        throw new OptionsError(
          `webhooks[${index}].url`,
          `points at ${host}, in ${range}, not the public internet, and blockPrivateNetworks is on. Use a public address, or turn the guard off for internal receivers.`,
        )
      }
    })
  }
  return {
    webhooks: resolved,
    sharedSecrets,
    standardKeys,
    timeoutMs: integerOption('timeoutMs', settings['timeoutMs'], 5_000, 1, MAX_TIMER_MS),
    retryWindowMs: integerOption(
      'retryWindowMs',
      settings['retryWindowMs'],
      4 * 60 * 60_000,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
    backoff: (backoff as ((attempt: number) => number) | undefined) ?? defaultBackoff,
    mode,
    maxConcurrency: integerOption('maxConcurrency', settings['maxConcurrency'], 256, 1, 100_000),
    maxConcurrencyPerUrl: integerOption('maxConcurrencyPerUrl', settings['maxConcurrencyPerUrl'], 64, 1, 100_000),
    maxPendingPerUrl: integerOption('maxPendingPerUrl', settings['maxPendingPerUrl'], 100_000, 1),
    breaker: breakerOption(settings['breaker']),
    ratePerUrl: rateOption(settings['ratePerUrl']),
    blockPrivateNetworks: block,
    // Checked last, as it always was: a transport of the user's is not looked at while other settings are wrong.
    transport: transportOption(settings['transport']),
  }
}

/**
 * The settings of an engine that serves only the destinations of its registry (docs/destinations.md):
 * those that apply to every destination. URLs, secrets and mode are each destination's own.
 */
export type DestinationsSettings = Omit<WebhookSettings, 'webhooks' | 'sharedSecret' | 'standardSecret' | 'mode'> & {
  webhooks?: undefined
}

/**
 * Refuses a URL listed twice in one `webhooks` list (as written: `HTTP://A/x` is `http://a/x`):
 * each event would go to it twice, and both entries would share its one lane.
 */
export function refuseRepeatedUrls(webhooks: readonly { readonly url: string }[], name = 'webhooks'): void {
  const seen = new Map<string, number>()
  webhooks.forEach(({ url }, index) => {
    const first = seen.get(url)
    if (first !== undefined)
      throw new OptionsError(
        `${name}[${index}].url`,
        `${withoutCredentials(url)} is ${name}[${first}].url already: each event would go to it twice. List each URL once.`,
      )
    seen.set(url, index)
  })
}

/** A `webhooks` list's length: 1 to {@link MAX_WEBHOOKS}. */
export function checkWebhookCount(webhooks: unknown, name = 'webhooks'): asserts webhooks is unknown[] {
  if (!Array.isArray(webhooks) || webhooks.length < 1 || webhooks.length > MAX_WEBHOOKS) {
    throw new OptionsError(
      name,
      `expected 1 to ${MAX_WEBHOOKS} entries, got ${Array.isArray(webhooks) ? webhooks.length : typeof webhooks}.`,
    )
  }
}

/** The `ratePerUrl` setting: a positive, finite number of deliveries a second, or none. */
function rateOption(value: unknown): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1_000_000) {
    throw new OptionsError(
      'ratePerUrl',
      `expected deliveries a second to one URL, above 0 and at most 1000000, got ${String(value)}.`,
    )
  }
  return value
}

/** The `breaker` setting: on with its defaults unless `false`. */
function breakerOption(value: unknown): BreakerRules | undefined {
  if (value === false) return undefined
  if (value === undefined) return BREAKER_DEFAULTS
  if (!isObject(value))
    throw new OptionsError('breaker', 'expected { failures?, failureRate?, windowMs?, coolDownMs? } or false.')
  checkOptionNames(value, { failures: true, failureRate: true, windowMs: true, coolDownMs: true }, {}, 'breaker.')
  const defaults = BREAKER_DEFAULTS
  return {
    failures: integerOption('breaker.failures', value['failures'], defaults.failures, 1, 1_000_000),
    failureRate: failureRateOption(value['failureRate'], defaults.failureRate),
    windowMs: integerOption('breaker.windowMs', value['windowMs'], defaults.windowMs, 10, MAX_TIMER_MS),
    coolDownMs: integerOption('breaker.coolDownMs', value['coolDownMs'], defaults.coolDownMs, 0, MAX_TIMER_MS),
  }
}

/** `breaker.failureRate`: a share of attempts, above 0 and at most 1. */
function failureRateOption(value: unknown, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !(value > 0 && value <= 1))
    throw new OptionsError(
      'breaker.failureRate',
      `expected the share of attempts that must have failed, above 0 and at most 1 (0.5: half), got ${String(value)}.`,
    )
  return value
}

/**
 * The `sharedSecret` and `standardSecret` of settings or of a destination: `prefix` names the
 * fields in errors (`destination.`).
 *
 * @throws {@link OptionsError} naming the setting, and the entry of a list.
 */
export function signingSecrets(
  settings: Record<string, unknown>,
  prefix = '',
): { sharedSecrets: string[]; standardKeys: Uint8Array[] } {
  const sharedSecrets = secretsOption(`${prefix}sharedSecret`, settings['sharedSecret'], (secret) =>
    typeof secret === 'string' && secret !== ''
      ? undefined
      : 'expected a non-empty string, or leave it out to send unsigned requests',
  )
  const standard = secretsOption(`${prefix}standardSecret`, settings['standardSecret'], whyNotStandardSecret)
  return { sharedSecrets, standardKeys: standard.map(standardKey) }
}

/**
 * A secret setting: one secret or a non-empty list (a rotation). `whyNot` says why a secret cannot
 * be used, or `undefined` when it can.
 *
 * @throws {@link OptionsError} naming the setting, and the entry of a list.
 */
function secretsOption(name: string, value: unknown, whyNot: (secret: unknown) => string | undefined): string[] {
  if (value === undefined) return []
  const list = Array.isArray(value)
  const secrets: readonly unknown[] = list ? value : [value]
  if (secrets.length === 0) {
    throw new OptionsError(name, 'expected one secret or more; leave it out to send no such signature.')
  }
  secrets.forEach((secret, index) => {
    const why = whyNot(secret)
    if (why !== undefined) throw new OptionsError(list ? `${name}[${index}]` : name, `${why}.`)
  })
  return secrets as string[]
}

function transportOption(value: unknown): WebhookTransport | undefined {
  if (value !== undefined && !isTransport(value))
    throw new OptionsError('transport', 'expected an object with send(request).')
  return value
}
