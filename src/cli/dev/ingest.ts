import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { MAX_BATCH_BYTES, type WireMessage } from '../../index.js'
import { gunzipSync } from 'node:zlib'
import { BodyTooLargeError, readBody } from '../http.js'
import { BatchRejection, checkBatch, parseBatchBody } from './batch.js'
import { corsHeaders, preflightHeaders, type CorsOrigins } from './cors.js'
import { writeKeyMatches } from './write-key.js'

/** What the ingest server does with what it accepts and refuses. */
export interface IngestHandlers {
  readonly writeKey: string
  /** Browser origins that may send (`*`: any); requests without `Origin` are not browsers' and always may. */
  readonly corsOrigins: CorsOrigins
  readonly onBatch: (messages: WireMessage[], bytes: number) => void
  readonly onRejected: (rejection: BatchRejection) => void
}

/** Longest wait for a request's headers, in ms. */
const INGEST_HEADERS_TIMEOUT_MS = 10_000
/** Longest wait for a whole request, headers and body, in ms: 500 KB at a slow 50 KB/s. */
const INGEST_REQUEST_TIMEOUT_MS = 10_000

type KeyCheck = 'ok' | 'missing' | 'wrong'

/**
 * Whether `Authorization` is HTTP Basic with the write key as user name (the password is ignored):
 * `missing` without Basic credentials, `wrong` with another key, so the sender learns which.
 */
function basicAuth(header: string | undefined, writeKey: string): KeyCheck {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '')
  if (!match?.[1]) return 'missing'
  const credentials = Buffer.from(match[1], 'base64').toString('utf8')
  const user = credentials.includes(':') ? credentials.slice(0, credentials.indexOf(':')) : credentials
  return writeKeyMatches(writeKey, user) ? 'ok' : 'wrong'
}

/** The same check for a `writeKey` field in the body: how browsers send it without a CORS preflight. */
function bodyKey(value: unknown, writeKey: string): KeyCheck {
  if (value === undefined) return 'missing'
  return typeof value === 'string' && writeKeyMatches(writeKey, value) ? 'ok' : 'wrong'
}

function refuseKey(check: Exclude<KeyCheck, 'ok'>): never {
  throw new BatchRejection(
    401,
    'ERR_UNAUTHORIZED',
    check === 'missing'
      ? 'send the write key as the HTTP Basic auth user name, or as "writeKey" in the body (eventwire dev printed it at start).'
      : "that write key is not this server's: use the one eventwire dev printed at start, or start it with --write-key.",
  )
}

function originRefused(origin: string | undefined): BatchRejection {
  return new BatchRejection(
    403,
    'ERR_ORIGIN',
    `pages from ${origin} may not send here: start eventwire dev with --cors-origin ${origin}.`,
  )
}

/**
 * Whether a body comes gzipped (`Content-Encoding: gzip` or `x-gzip`) or as it is (none, empty,
 * `identity`).
 *
 * @throws {@link BatchRejection} 415 for any other encoding, before the body is read.
 */
function isGzip(encoding: string | undefined): boolean {
  const name = encoding?.trim().toLowerCase()
  if (name === undefined || name === '' || name === 'identity') return false
  if (name === 'gzip' || name === 'x-gzip') return true
  throw new BatchRejection(
    415,
    'ERR_ENCODING',
    `Content-Encoding ${JSON.stringify(encoding)} is not taken: send gzip, or no encoding.`,
  )
}

/**
 * A gzip body inflated, stopping at {@link MAX_BATCH_BYTES} of output (the batch limit is on the
 * JSON, and a small gzip body can hold gigabytes: a bomb is refused without ever being inflated).
 *
 * @throws {@link BodyTooLargeError} past the limit; {@link BatchRejection} for a body that is not gzip (400).
 */
function inflated(body: Buffer): Buffer {
  try {
    return gunzipSync(body, { maxOutputLength: MAX_BATCH_BYTES })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new BodyTooLargeError(MAX_BATCH_BYTES)
    throw new BatchRejection(400, 'ERR_ENCODING', `the body is not valid gzip (${(error as Error).message}).`)
  }
}

async function accept(
  request: IncomingMessage,
  handlers: IngestHandlers,
): Promise<{ messages: WireMessage[]; bytes: number }> {
  if (request.method !== 'POST') {
    throw new BatchRejection(405, 'ERR_METHOD', `/v1/batch takes POST, not ${request.method}.`)
  }
  if (corsHeaders(request.headers.origin, handlers.corsOrigins) === undefined) {
    throw originRefused(request.headers.origin)
  }
  // A key in the header is checked before the body is read; one in the body, once it is parsed.
  const header = basicAuth(request.headers.authorization, handlers.writeKey)
  if (header === 'wrong') refuseKey(header)
  let body: Buffer
  try {
    // gzip's own framing (stored blocks add a few bytes per 64 KiB) may take a body a little past
    // the limit that its JSON is within: the limit is on the JSON, checked as it is inflated.
    const gzip = isGzip(request.headers['content-encoding'])
    body = await readBody(request, MAX_BATCH_BYTES + (gzip ? 1_024 : 0))
    if (gzip) body = inflated(body)
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      throw new BatchRejection(413, 'ERR_BODY_TOO_LARGE', `a batch body may be at most ${MAX_BATCH_BYTES} bytes.`)
    throw error
  }
  const parsed = parseBatchBody(body.toString('utf8'))
  const inBody = bodyKey(parsed['writeKey'], handlers.writeKey)
  if (inBody === 'wrong' || (header === 'missing' && inBody === 'missing')) refuseKey(inBody)
  return { messages: checkBatch(parsed), bytes: body.length }
}

function answer(
  response: ServerResponse,
  status: number,
  body: object,
  headers: Readonly<Record<string, string>> = {},
): void {
  response.writeHead(status, { ...headers, 'content-type': 'application/json' }).end(JSON.stringify(body))
}

/**
 * The local ingest API: `POST /v1/batch` with the write key as the Basic-auth user name or as
 * `writeKey` in the body, checked with the client's rules, and CORS for pages of the allowed
 * origins (preflights included). Accepted batches are answered 200 before anything is forwarded,
 * as a real platform would.
 */
export function createIngestServer(handlers: IngestHandlers): Server {
  // A client sends a batch in one go: one that stalls in its headers or body is cut off (408) well
  // before Node's defaults (60 s for headers, 300 s for the whole request, checked every 30 s).
  const limits = {
    headersTimeout: INGEST_HEADERS_TIMEOUT_MS,
    requestTimeout: INGEST_REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: 1_000,
  }
  return createServer(limits, (request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    // Every answer to an allowed page carries its CORS headers: without them the page cannot read
    // even a refusal's reason.
    const cors = corsHeaders(request.headers.origin, handlers.corsOrigins) ?? {}
    const refuse = (rejection: BatchRejection) => {
      // An unread body would otherwise keep the connection busy.
      response.setHeader('connection', 'close')
      answer(response, rejection.status, { success: false, code: rejection.code, error: rejection.message }, cors)
      handlers.onRejected(rejection)
    }
    if (path !== '/v1/batch') {
      refuse(new BatchRejection(404, 'ERR_NOT_FOUND', `nothing at ${path}: the ingest API is POST /v1/batch.`))
      return
    }
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      const allowed = preflightHeaders(request.headers, handlers.corsOrigins)
      if (allowed === undefined) {
        refuse(originRefused(request.headers.origin))
        return
      }
      response.writeHead(204, allowed).end()
      return
    }
    accept(request, handlers).then(
      ({ messages, bytes }) => {
        answer(response, 200, { success: true }, cors)
        handlers.onBatch(messages, bytes)
      },
      (error: unknown) =>
        refuse(
          error instanceof BatchRejection ? error : new BatchRejection(500, 'ERR_BAD_BATCH', (error as Error).message),
        ),
    )
  })
}
