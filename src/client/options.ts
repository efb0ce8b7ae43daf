import { IN_BROWSER } from '../core/browser.js'
import type { SchemaPlan } from '../core/plan.js'
import { planChecker, type PlanChecker } from '../core/plan-checker.js'
import { consoleLogger, guardLogger, isDebugEnabled, type Logger } from '../core/debug.js'
import { OptionsError } from '../core/errors/options-error.js'
import {
  checkOptionNames,
  type OtherName,
  choiceOption,
  integerOption,
  parseHttpUrl,
  withoutCredentials,
} from '../core/option-checks.js'
import { MAX_BATCH_BYTES, MAX_MESSAGE_BYTES } from '../core/limits.js'
import { MAX_TIMER_MS } from '../core/timers.js'
import { checkJsonValue, isPlain } from '../core/json-value.js'
import type { JsonObject } from '../core/json-value.js'
import { utf8ByteLength } from '../core/utf8.js'
import type { Middleware } from './middleware.js'
import { isObject } from '../core/validate.js'

/** How failed requests are retried. Delays grow as `baseDelay * 2 ** (retry - 1)`, capped at `maxDelay`, each with ±20% jitter. */
export interface RetryOptions {
  /** Retries after the first attempt. `0` turns retries off. @defaultValue 10 */
  limit?: number | undefined
  /** Delay before the first retry, in ms. @defaultValue 100 */
  baseDelay?: number | undefined
  /** Longest delay between two attempts, in ms (before jitter). @defaultValue 10_000 */
  maxDelay?: number | undefined
  /** Longest wait a `Retry-After` header can ask for, in ms. @defaultValue 60_000 */
  maxRetryAfter?: number | undefined
}

/** {@link RetryOptions} with every default filled in: `Required` alone would keep the `| undefined` each option accepts. */
export type ResolvedRetryOptions = { readonly [Key in keyof RetryOptions]-?: NonNullable<RetryOptions[Key]> }

/** Options of {@link Client}. Every one is optional; `undefined` means the default, as if left out. */
export interface ClientOptions {
  /** Base URL of the ingest API; batches go to `POST {endpoint}/v1/batch`. @defaultValue 'https://api.segment.io' */
  endpoint?: string | undefined
  /** Messages queued before a flush starts. `1` sends every message on its own. @defaultValue 20 */
  flushAt?: number | undefined
  /** Alias of `flushAt` (the Go client's `Size`). */
  size?: number | undefined
  /** Longest time, in ms, a queued message waits before a flush. @defaultValue 5_000 */
  flushAfter?: number | undefined
  /** Time limit of one HTTP attempt, in ms. @defaultValue 10_000 */
  timeout?: number | undefined
  /** Retry schedule of failed requests. */
  retry?: RetryOptions | undefined
  /**
   * Batch requests in flight at once. One, as the Go client v2 sends: under load each request then
   * carries more messages, and every request costs CPU. @defaultValue 1
   */
  maxConcurrentRequests?: number | undefined
  /** Most messages held at once (queued, in flight and retrying). @defaultValue 250_000 */
  maxQueueSize?: number | undefined
  /** Most UTF-8 bytes of message JSON held at once (queued, in flight and retrying); past it calls are dropped. @defaultValue 268_435_456 (256 MiB) */
  maxQueueBytes?: number | undefined
  /**
   * Bytes of message JSON held from which calls return `false` (backpressure), until `'drain'`. Capped
   * at half of `maxQueueBytes`. @defaultValue 8_388_608 (8 MiB, some 40,000 small events)
   */
  highWaterMark?: number | undefined
  /** Where log lines go. @defaultValue the console's standard error, prefixed `analytics` */
  logger?: Logger | undefined
  /** Debug logging on or off. @defaultValue on when `DEBUG` matches `analytics` (the `debug` package's convention) */
  verbose?: boolean | undefined
  /** The `fetch` to send with: for tests, proxies and runtimes without a global one. @defaultValue `globalThis.fetch` */
  fetch?: typeof fetch | undefined
  /**
   * On Node, an egress proxy to send through, in an HTTP CONNECT tunnel: `http://host:port` or
   * `https://host:port`, with `user:password@` for Basic credentials; `'env'` reads `HTTPS_PROXY`,
   * `HTTP_PROXY` and `NO_PROXY`. Deno and Bun refuse it: their `fetch` reads those variables itself.
   * Browsers have no such setting and ignore it. @defaultValue none
   */
  proxy?: string | undefined
  /**
   * In a browser page, send every batch with `keepalive` (so a request in flight outlives the page),
   * each within the 64 KiB browsers allow such requests in all, and send what is queued when the
   * page is hidden or left. `false`: batches of up to 500 KB without `keepalive`, as on servers.
   * @defaultValue true
   */
  flushOnPageHide?: boolean | undefined
  /**
   * In a browser page, keep in `localStorage` what the keepalive budget cannot carry as the page is
   * left, for the next `Client` of the same endpoint and write key on this origin (the next page of
   * the site, or this one coming back) to send first. `false`: what does not fit is lost with the
   * page. The callbacks of messages kept are not called.
   * @defaultValue true
   */
  storeOnPageHide?: boolean | undefined
  /**
   * Where the write key travels. `'header'`: as the user name of HTTP Basic auth, with
   * `Content-Type: application/json`, as Segment's API and the Go client do. `'body'`: as a
   * `writeKey` field of the batch body, sent as `Content-Type: text/plain`, which makes the
   * request CORS-simple: a browser sends it to another origin without first asking with an
   * `OPTIONS` preflight (one round trip less per batch, and nothing to be lost as the page goes
   * away). The endpoint must read the key from the body (Segment's API and `eventwire dev` do).
   * @defaultValue `'body'` in browsers (pages and workers), `'header'` everywhere else
   */
  writeKeyIn?: 'header' | 'body' | undefined
  /**
   * For serverless functions and edge workers, which may be frozen or stopped once the response is
   * sent: the platform's `waitUntil`, which keeps the invocation alive until a promise settles.
   * With it, the calls made in one tick are sent together at its end (instead of waiting for
   * `flushAt` or `flushAfter`), and that flush is handed to `waitUntil` during the first call.
   * Cloudflare Workers: `ctx.waitUntil.bind(ctx)` or `waitUntil` from `cloudflare:workers`;
   * Vercel: `waitUntil` from `@vercel/functions`; Netlify: `context.waitUntil`. Where the platform
   * has none (AWS Lambda), `await client.flush()` before returning.
   */
  waitUntil?: ((promise: Promise<unknown>) => void) | undefined
  /**
   * `'gzip'`: batch bodies of at least `compressionThreshold` bytes go gzipped, with
   * `Content-Encoding: gzip` (analytics JSON shrinks some tenfold). Each body is compressed once
   * and the same bytes are resent on retry; the 500 KB batch limit is on the JSON before
   * compression. Turn it on when the endpoint accepts gzip bodies (`eventwire dev` does). Where
   * the runtime has no `CompressionStream`, bodies go uncompressed (the debug log says so). In a
   * browser, `Content-Encoding` makes a request to another origin ask with a CORS preflight first.
   * @defaultValue 'none'
   */
  compression?: 'gzip' | 'none' | undefined
  /**
   * With `compression: 'gzip'`, bytes of batch JSON from which the body is compressed: below it a
   * request fits one TCP segment anyway and gzip would only cost time. @defaultValue 1_024
   */
  compressionThreshold?: number | undefined
  /**
   * Fields every batch carries in its top-level `context`, beside the client's own `library`
   * (which they cannot replace): the app's version, the environment, anything true of every event
   * this client sends. Checked at construction like a message's values, copied and serialized
   * once: every batch carries the same bytes, whatever happens to the object later. At most
   * 16,000 bytes as JSON (so that a batch of one largest message fits beside it in a browser's
   * keepalive request). (The Go client v3's `DefaultContext`.)
   * @example `{ app: { name: 'shop', version: '2.4.1' }, environment: 'production' }`
   */
  defaultContext?: JsonObject | undefined
  /**
   * What a call that breaks the plan gets. `'refuse'`: a `ValidationError` (`ERR_PLAN_VIOLATION`,
   * `field` the path the schema named); nothing is queued. `'report'`: it is sent as given, and a
   * `'violation'` event says what is wrong. `'off'`: no run-time check (the types still hold).
   * @defaultValue 'refuse'
   */
  planCheck?: 'refuse' | 'report' | 'off' | undefined
}

/**
 * The `plan` option of {@link Client}, apart from {@link ClientOptions} so that the client's type
 * follows the plan given (and a `ClientOptions` value types a client without one, as ever).
 */
export interface PlanOption<Plan> {
  /**
   * A tracking plan of Standard Schemas (see `definePlan`): `track` calls must name one of its
   * events, with properties its schema accepts; `identify` and `group` traits must pass its
   * `traits` and `groupTraits`. The calls are typed by it, and checked at run time as `planCheck`
   * says. What is sent is the schema's output (its defaults and normalized values).
   */
  plan?: Plan | undefined
  /**
   * Functions that shape each call's message before it is queued, in order (more with
   * `client.use()`): each returns the message, a changed one, or `null` to drop the call. See
   * {@link Middleware}; typed by the plan when there is one. Beside `plan` since its type follows
   * the plan's.
   */
  middleware?: readonly Middleware<Plan>[] | undefined
}

/** Options with every default filled in. */
export interface ResolvedClientOptions {
  readonly writeKey: string
  readonly batchUrl: string
  readonly flushAt: number
  readonly flushAfter: number
  readonly timeout: number
  readonly retry: ResolvedRetryOptions
  readonly maxConcurrentRequests: number
  readonly maxQueueSize: number
  readonly maxQueueBytes: number
  /** Backpressure threshold in bytes: `highWaterMark`, at most half of `maxQueueBytes`. */
  readonly highWaterBytes: number
  readonly logger: Logger
  readonly verbose: boolean
  readonly fetch: typeof fetch | undefined
  /** The `proxy` option as given: the Node transport checks it, the others refuse or ignore it. */
  readonly proxy: unknown
  readonly flushOnPageHide: boolean
  readonly storeOnPageHide: boolean
  readonly writeKeyIn: 'header' | 'body'
  readonly waitUntil: ((promise: Promise<unknown>) => void) | undefined
  /** Bytes of batch JSON from which bodies are gzipped; `undefined` when `compression` is `'none'`. */
  readonly compressFrom: number | undefined
  /** The `middleware` option, checked and copied (`use()` adds to the client's own list). */
  readonly middleware: readonly Middleware<unknown>[]
  /** The `defaultContext` option, checked and copied. */
  readonly defaultContext: JsonObject | undefined
  /** The plan's check, when a plan is given and `planCheck` is not `'off'`. */
  readonly plan: PlanChecker | undefined
}

/** The debug namespace, as in `DEBUG=analytics`. */
export const DEBUG_NAMESPACE = 'analytics'

/** What a runtime's `platform/` module tells the option checks. */
export interface OptionsPlatform {
  /** Other clients' names for our options, named when one is given (server runtimes). */
  readonly otherNames?: Readonly<Record<string, OtherName>> | undefined
  /**
   * Reads the `debug` convention's setting where this runtime keeps it; none means debug logging
   * is off unless `verbose` says otherwise.
   */
  readonly debugSetting?: (() => string) | undefined
}

/** The defaults of {@link ClientOptions}: the README's options table is checked against them (test/docs-facts.test.ts). */
export const DEFAULTS = {
  endpoint: 'https://api.segment.io',
  flushAt: 20,
  flushAfter: 5_000,
  timeout: 10_000,
  maxConcurrentRequests: 1,
  maxQueueSize: 250_000,
  maxQueueBytes: 256 * 1024 * 1024,
  highWaterMark: 8 * 1024 * 1024,
  compressionThreshold: 1_024,
  planCheck: 'refuse',
  retry: { limit: 10, baseDelay: 100, maxDelay: 10_000, maxRetryAfter: 60_000 },
} as const

/** Every option of {@link ClientOptions}; a key missing here fails to compile. */
const OPTION_NAMES: Readonly<Record<keyof (ClientOptions & PlanOption<unknown>), true>> = {
  endpoint: true,
  flushAt: true,
  size: true,
  flushAfter: true,
  timeout: true,
  retry: true,
  maxConcurrentRequests: true,
  maxQueueSize: true,
  maxQueueBytes: true,
  highWaterMark: true,
  logger: true,
  verbose: true,
  fetch: true,
  proxy: true,
  flushOnPageHide: true,
  storeOnPageHide: true,
  writeKeyIn: true,
  waitUntil: true,
  compression: true,
  compressionThreshold: true,
  planCheck: true,
  defaultContext: true,
  middleware: true,
  plan: true,
}

const RETRY_OPTION_NAMES: Readonly<Record<keyof RetryOptions, true>> = {
  limit: true,
  baseDelay: true,
  maxDelay: true,
  maxRetryAfter: true,
}

/** How to pass the write key, for Segment's constructor shape `new Client({ writeKey })`. */
export const WRITE_KEY_FIRST = "pass the write key first: `new Client('WRITE_KEY', options)`"

/** A value as an endpoint message quotes it: JSON, with any URL credentials in it left out. */
function quoted(value: unknown): string {
  return withoutCredentials(String(JSON.stringify(value)))
}

function resolveEndpoint(value: unknown): string {
  if (value === undefined) return `${DEFAULTS.endpoint}/v1/batch`
  const url = parseHttpUrl(value)
  if (!url) throw new OptionsError('endpoint', `expected an absolute http:// or https:// URL, got ${quoted(value)}.`)
  if (url.username || url.password) {
    // fetch refuses such a URL, and the write key is what authenticates.
    url.username = ''
    url.password = ''
    throw new OptionsError(
      'endpoint',
      `expected no user name or password in it (the write key authenticates); use ${quoted(url.href.replace(/\/+$/, ''))}.`,
    )
  }
  if (url.search || url.hash) {
    throw new OptionsError('endpoint', 'expected a base URL without query or fragment; /v1/batch is appended to it.')
  }
  // Go appends /v1/batch to whatever it is given; an endpoint copied with its /v1 (or /v1/batch)
  // would post to /v1/v1/batch, which no ingest API answers.
  const versioned = /\/v1(\/batch)?\/*$/.exec(url.pathname)
  if (versioned) {
    throw new OptionsError(
      'endpoint',
      `expected the base URL, since /v1/batch is appended to it: ${quoted(url.href.slice(0, url.href.length - versioned[0].length))}.`,
    )
  }
  return `${url.href.replace(/\/+$/, '')}/v1/batch`
}

/** The names in `defaults` whose default is a number. */
type NumberName<Defaults> = { [Name in keyof Defaults]: Defaults[Name] extends number ? Name : never }[keyof Defaults] &
  string

/**
 * A whole-number option: `given[name]` checked to lie in [min, max], or its default. One call per
 * option names it once, which keeps the browser bundle small.
 */
function wholeNumber<Defaults extends object>(
  given: object,
  defaults: Defaults,
  name: NumberName<Defaults>,
  min: number,
  max?: number,
  prefix = '',
): number {
  return integerOption(`${prefix}${name}`, (given as Record<string, unknown>)[name], defaults[name] as number, min, max)
}

function resolveFlushAt(options: ClientOptions): number {
  const flushAt = wholeNumber(options, DEFAULTS, 'flushAt', 1)
  const size = integerOption('size', options.size, flushAt, 1)
  if (options.flushAt !== undefined && options.size !== undefined && flushAt !== size) {
    throw new OptionsError(
      'size',
      `\`size\` is an alias of \`flushAt\`; they disagree (${size} and ${flushAt}). Set one.`,
    )
  }
  return size
}

function resolveRetry(value: unknown): ResolvedRetryOptions {
  if (value === undefined) return DEFAULTS.retry
  if (!isObject(value)) throw new OptionsError('retry', 'expected an object such as { limit: 10 }.')
  checkOptionNames(value, RETRY_OPTION_NAMES, {}, 'retry.')
  return {
    limit: wholeNumber(value, DEFAULTS.retry, 'limit', 0, 1_000, 'retry.'),
    baseDelay: wholeNumber(value, DEFAULTS.retry, 'baseDelay', 0, MAX_TIMER_MS, 'retry.'),
    maxDelay: wholeNumber(value, DEFAULTS.retry, 'maxDelay', 0, MAX_TIMER_MS, 'retry.'),
    maxRetryAfter: wholeNumber(value, DEFAULTS.retry, 'maxRetryAfter', 0, MAX_TIMER_MS, 'retry.'),
  }
}

function resolveLogger(value: unknown): Logger {
  if (value === undefined) return consoleLogger(DEBUG_NAMESPACE)
  if (!isObject(value) || typeof value['log'] !== 'function' || typeof value['error'] !== 'function') {
    throw new OptionsError('logger', 'expected an object with log(message) and error(message) methods.')
  }
  return guardLogger(value as unknown as Logger)
}

/**
 * Most bytes of `defaultContext` as JSON: every batch carries it, and in a browser page a batch of
 * one largest message (32,000 bytes) must still fit beside it in a keepalive request (64,000).
 */
export const MAX_DEFAULT_CONTEXT_BYTES = 16_000

/**
 * The `defaultContext` option: a plain object of JSON values without `library` (the client's own),
 * at most {@link MAX_DEFAULT_CONTEXT_BYTES} as JSON; a copy, so that later changes to the caller's
 * object do not reach the batches.
 */
function resolveDefaultContext(value: unknown): JsonObject | undefined {
  if (value === undefined) return undefined
  let json: string | undefined
  try {
    // The same rules as a message's values: a plain object (not a Date, nor anything whose toJSON
    // makes it something else), JSON values only.
    if (isObject(value) && isPlain(value) && typeof (value as { toJSON?: unknown }).toJSON !== 'function') {
      checkJsonValue(value, 'defaultContext')
      json = JSON.stringify(value)
    }
  } catch (error) {
    throw new OptionsError('defaultContext', (error as Error).message, { cause: error })
  }
  const parsed: unknown = json === undefined ? undefined : JSON.parse(json)
  if (
    !isObject(parsed) ||
    Object.hasOwn(parsed, 'library') ||
    utf8ByteLength(json as string) > MAX_DEFAULT_CONTEXT_BYTES
  ) {
    throw new OptionsError(
      'defaultContext',
      `expected a plain object of JSON values, without \`library\` (the client's own), at most ${MAX_DEFAULT_CONTEXT_BYTES} bytes as JSON.`,
    )
  }
  return parsed as JsonObject
}

function resolveCompression(given: ClientOptions): number | undefined {
  const threshold = wholeNumber(given, DEFAULTS, 'compressionThreshold', 0, MAX_BATCH_BYTES)
  return choiceOption('compression', given.compression, ['gzip', 'none']) === 'gzip' ? threshold : undefined
}

/** Checks a middleware (the option's, or one given to `use()`). */
export function checkMiddleware(middleware: unknown): Middleware<unknown> {
  if (typeof middleware !== 'function')
    throw new OptionsError('middleware', 'expected (message, call) => message | null.')
  return middleware as Middleware<unknown>
}

function resolveMiddleware(value: unknown): readonly Middleware<unknown>[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value.map(checkMiddleware) : [checkMiddleware(undefined)]
}

/**
 * Checks the write key and options and fills in defaults. `otherNames` are other clients' names
 * for our options, for the message that refuses one.
 *
 * @throws {@link OptionsError} naming the first option it cannot use.
 */
export function resolveClientOptions(
  writeKey: unknown,
  options: unknown,
  { otherNames = {}, debugSetting }: OptionsPlatform = {},
): ResolvedClientOptions {
  if (isObject(writeKey) && Object.hasOwn(writeKey, 'writeKey')) {
    // Segment's constructor shape, `new Analytics({ writeKey })`.
    throw new OptionsError('writeKey', `expected a string, got an object with a writeKey; ${WRITE_KEY_FIRST}.`)
  }
  if (typeof writeKey !== 'string' || writeKey === '') {
    throw new OptionsError('writeKey', 'expected the non-empty write key of your source, found in its settings.')
  }
  if (options === undefined) options = {}
  if (!isObject(options)) throw new OptionsError('options', 'expected an object.')
  checkOptionNames(options, OPTION_NAMES, otherNames)
  const given = options as ClientOptions & PlanOption<SchemaPlan>
  for (const name of ['verbose', 'flushOnPageHide', 'storeOnPageHide'] as const) {
    if (given[name] !== undefined && typeof given[name] !== 'boolean')
      throw new OptionsError(name, 'expected true or false.')
  }
  if (given.fetch !== undefined && typeof given.fetch !== 'function') {
    throw new OptionsError('fetch', 'expected a fetch-compatible function.')
  }
  const planCheck = choiceOption('planCheck', given.planCheck, ['refuse', 'report', 'off']) ?? DEFAULTS.planCheck
  const plan = given.plan === undefined ? undefined : planChecker(given.plan, planCheck)
  if (given.waitUntil !== undefined && typeof given.waitUntil !== 'function') {
    throw new OptionsError('waitUntil', 'expected a function, such as ctx.waitUntil.bind(ctx).')
  }
  const maxQueueBytes = wholeNumber(given, DEFAULTS, 'maxQueueBytes', MAX_MESSAGE_BYTES)
  const highWaterMark = wholeNumber(given, DEFAULTS, 'highWaterMark', 1)
  return {
    writeKey,
    batchUrl: resolveEndpoint(given.endpoint),
    flushAt: resolveFlushAt(given),
    flushAfter: wholeNumber(given, DEFAULTS, 'flushAfter', 1, MAX_TIMER_MS),
    timeout: wholeNumber(given, DEFAULTS, 'timeout', 1, MAX_TIMER_MS),
    retry: resolveRetry(given.retry),
    maxConcurrentRequests: wholeNumber(given, DEFAULTS, 'maxConcurrentRequests', 1, 1_000),
    maxQueueSize: wholeNumber(given, DEFAULTS, 'maxQueueSize', 1),
    maxQueueBytes,
    highWaterBytes: Math.min(highWaterMark, Math.floor(maxQueueBytes / 2)),
    logger: resolveLogger(given.logger),
    verbose: given.verbose ?? isDebugEnabled(DEBUG_NAMESPACE, debugSetting?.() ?? ''),
    fetch: given.fetch,
    proxy: given.proxy,
    flushOnPageHide: given.flushOnPageHide ?? true,
    storeOnPageHide: given.storeOnPageHide ?? true,
    writeKeyIn: choiceOption('writeKeyIn', given.writeKeyIn, ['header', 'body']) ?? (IN_BROWSER ? 'body' : 'header'),
    waitUntil: given.waitUntil,
    compressFrom: resolveCompression(given),
    defaultContext: resolveDefaultContext(given.defaultContext),
    middleware: resolveMiddleware(given.middleware),
    plan,
  }
}
