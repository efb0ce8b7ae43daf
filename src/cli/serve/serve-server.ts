import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { WireMessage } from '../../index.js'
import { BatchRejection } from '../ingest/batch.js'
import {
  answerJson as answer,
  ingestKind,
  INGEST_SERVER_OPTIONS,
  readIngest,
  type WriteKeys,
} from '../ingest/ingest-request.js'
import type { StoredSource } from '../../webhook/bullmq/index.js'
import type { IngestMeasure } from './serve-metrics.js'
import type { Admission } from './source-rates.js'
import { Repeats } from './repeats.js'

// The HTTP side of `eventwire serve`: the ingest API, answered 200 only once Redis holds every
// event of the request (acknowledged means durable), and the health checks a load balancer asks.

/** What the server needs of a source: the registry's source, as read. */
export type ServedSource = Pick<StoredSource, 'id' | 'destinations' | 'rateLimit'>

/** What the server needs of the rest of the process. */
export interface ServeServerParts {
  readonly keys: WriteKeys<ServedSource>
  /**
   * Stores a request's messages for each destination of its source; resolves once Redis holds
   * them all. Rejects with why it could not: see {@link answerOf}.
   */
  store(source: ServedSource, messages: WireMessage[]): Promise<void>
  /** Whether a request of `source` is taken now, by its rate limit. */
  admit(source: ServedSource): Admission
  /** The rate limit's refusals not yet logged, taken once a second; none by default. */
  readonly unreported?: (() => Array<{ source: string; refused: number }>) | undefined
  /** Whether this process takes events now: started on a Redis fit to keep them, and not stopping. */
  ready(): Promise<boolean>
  /** One structured log entry. */
  log(entry: Readonly<Record<string, unknown>>): void
  /** Counts each ingest answer, for `--metrics-port`. */
  readonly measure?: IngestMeasure | undefined
}

/** Most headers a request may carry. */
export const MAX_HEADERS = 100
/** What a client waits before it tries again after a 503, in seconds. */
export const RETRY_AFTER_S = 1

/** Browsers send the write key in the body, as text: no preflight. One that asks is allowed what the clients send. */
const CORS = { 'access-control-allow-origin': '*' } as const
const PREFLIGHT = {
  ...CORS,
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'authorization, content-type, content-encoding',
  'access-control-max-age': '600',
} as const

/**
 * The answer to a store that failed: 503 with Retry-After while Redis cannot take events (it did
 * not answer in time, it refused the write, durability is not met, the process is stopping), 400
 * for an event the webhook rules refuse, 500 for anything else.
 */
export function answerOf(error: unknown): BatchRejection {
  const code = (error as { code?: unknown } | undefined)?.code
  const message = error instanceof Error ? error.message : String(error)
  if (
    code === 'ERR_TIMEOUT' ||
    code === 'ERR_REDIS_REFUSED' ||
    code === 'ERR_REDIS_FAULT' ||
    code === 'ERR_NOT_REPLICATED' ||
    code === 'ERR_CLOSED' ||
    // Redis's persistence falls short of `durability`: nothing is stored until it is fit again.
    code === 'ERR_INVALID_OPTION'
  ) {
    // A timeout's message gives the library's advice (raise enqueueTimeout): not the sender's to take.
    const why = code === 'ERR_TIMEOUT' ? 'Redis did not answer in time.' : message
    return new BatchRejection(
      503,
      'ERR_UNAVAILABLE',
      `the events were not stored: ${why} Send the request again.`,
      RETRY_AFTER_S,
    )
  }
  if (typeof code === 'string' && code.startsWith('ERR_') && (error as { field?: unknown }).field !== undefined)
    return new BatchRejection(400, 'ERR_BAD_BATCH', message)
  return new BatchRejection(500, 'ERR_INTERNAL', `the events were not stored: ${message}`)
}

/** Connections one process holds open at once by default; more are closed as they come. */
export const DEFAULT_MAX_CONNECTIONS = 1_000

/** How often the rate limit's refusals that no later refusal reported are logged (ms). */
const REFUSALS_LOGGED_EVERY_MS = 1_000

/** Between two log lines about connections closed for the limit, at least this long (ms). */
export const DROPS_LOGGED_EVERY_MS = 10_000

/**
 * The ingest API (`POST /v1/batch`, `/v1/<type>`), `GET /healthz` (the process is up) and
 * `GET /readyz` (it takes events: see {@link ServeServerParts.ready}). Past `maxConnections`
 * connections at once, a new one is closed as it comes, and logged every 10 s at most.
 */
export function createServeServer(parts: ServeServerParts, maxConnections = DEFAULT_MAX_CONNECTIONS): Server {
  // The 401s of one process: the first of each second logged whole, the others counted and logged
  // as one line a second. A flood of wrong keys writes a line a second, not a line a request.
  const unauthorized = new Repeats(REFUSALS_LOGGED_EVERY_MS)
  const server = createServer(INGEST_SERVER_OPTIONS, (request, response) =>
    handle(parts, unauthorized, request, response),
  )
  server.maxHeadersCount = MAX_HEADERS
  server.maxConnections = maxConnections
  let dropped = 0
  let loggedAt = Number.NEGATIVE_INFINITY
  // Once a second, the refusals of the rate limit that no later refusal reported.
  const reporter = setInterval(() => {
    for (const { source, refused } of parts.unreported?.() ?? [])
      parts.log({ level: 'warn', event: 'rate-limited', source, refused })
    for (const { held } of unauthorized.unreported()) parts.log({ level: 'warn', event: 'unauthorized', refused: held })
  }, REFUSALS_LOGGED_EVERY_MS)
  reporter.unref()
  server.on('close', () => clearInterval(reporter))
  server.on('drop', () => {
    dropped++
    const now = performance.now()
    // Stryker disable next-line EqualityOperator: a line at exactly 10 s or just after is alike.
    if (now - loggedAt < DROPS_LOGGED_EVERY_MS) return
    parts.log({ level: 'warn', event: 'connections-full', maxConnections, dropped })
    dropped = 0
    loggedAt = now
  })
  return server
}

/** Throws the 429 for a source over its rate; logs the refusals once a second at most. */
function admitter(parts: ServeServerParts, path: string): (source: ServedSource) => void {
  return (source) => {
    const { waitMs, report } = parts.admit(source)
    if (waitMs === 0) return
    if (report !== undefined)
      parts.log({ level: 'warn', event: 'rate-limited', path, source: source.id, refused: report })
    const seconds = Math.ceil(waitMs / 1_000)
    const rejection = new BatchRejection(
      429,
      'ERR_RATE_LIMITED',
      `this source sends more requests a second than it may. Send again after ${seconds} s, or batch more events a request.`,
      seconds,
    )
    // Counted under its source: which customer is held back is what an operator asks.
    rejection.source = source.id
    throw rejection
  }
}

function handle(
  parts: ServeServerParts,
  unauthorized: Repeats,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const path = (request.url ?? '/').split('?')[0] as string
  const refuse = (rejection: BatchRejection, source?: string) => {
    // An unread body would otherwise keep the connection busy.
    response.setHeader('connection', 'close')
    const headers =
      rejection.retryAfterS === undefined ? CORS : { ...CORS, 'retry-after': String(rejection.retryAfterS) }
    answer(response, rejection.status, { success: false, code: rejection.code, error: rejection.message }, headers)
    parts.measure?.(rejection.status, source, 0)
    // A flood of 429s is logged by the admitter, and one of 401s by the reporter: a line a second.
    if (rejection.status === 429 || (rejection.status === 401 && !unauthorized.take('401'))) return
    parts.log({
      level: rejection.status >= 500 ? 'error' : 'warn',
      event: 'refused',
      path,
      status: rejection.status,
      code: rejection.code,
      reason: rejection.message,
      ...(source === undefined ? {} : { source }),
    })
  }
  if (path === '/healthz') {
    answer(response, 200, { ok: true })
    return
  }
  if (path === '/readyz') {
    parts.ready().then(
      (ready) => answer(response, ready ? 200 : 503, { ready }),
      () => answer(response, 503, { ready: false }),
    )
    return
  }
  const kind = ingestKind(path)
  if (kind === undefined) {
    refuse(
      new BatchRejection(404, 'ERR_NOT_FOUND', `nothing at ${path}: the ingest API is POST /v1/batch, or /v1/<type>.`),
    )
    return
  }
  if (request.method === 'OPTIONS') {
    response.writeHead(204, PREFLIGHT).end()
    return
  }
  readIngest(request, kind, parts.keys, admitter(parts, path))
    .then(async ({ source, messages }) => {
      try {
        await parts.store(source, messages)
      } catch (error) {
        refuse(answerOf(error), source.id)
        return
      }
      answer(response, 200, { success: true }, CORS)
      parts.measure?.(200, source.id, messages.length)
    })
    // A write key looked up while Redis does not answer is a 503, as a store would be.
    .catch((error: unknown) =>
      error instanceof BatchRejection ? refuse(error, error.source) : refuse(answerOf(error)),
    )
}
