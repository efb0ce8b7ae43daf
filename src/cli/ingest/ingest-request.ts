import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http'
import { gunzipSync } from 'node:zlib'
import { MAX_BATCH_BYTES, type MessageType, type WireMessage } from '../../index.js'
import { BodyTooLargeError, readBody } from '../http.js'
import { BatchRejection, checkBatch, parseBatchBody, parseCallBody } from './batch.js'

// What an ingest request holds, read as the platform's clients send it: `POST /v1/batch`, or one
// call at `/v1/<type>`; the write key as the HTTP Basic user name (the password ignored) or as
// `writeKey` in the body (how browsers send it without a CORS preflight); gzip or not; at most a
// batch's bytes of JSON, each message by the client's own rules. Shared by `eventwire dev` and
// `eventwire serve`: one reading, one set of answers.

/** The ingest API's paths: the batch, and one path per call type. */
export const INGEST_PATHS: Readonly<Record<string, MessageType | 'batch'>> = {
  '/v1/batch': 'batch',
  '/v1/identify': 'identify',
  '/v1/track': 'track',
  '/v1/page': 'page',
  '/v1/screen': 'screen',
  '/v1/group': 'group',
  '/v1/alias': 'alias',
}

/**
 * The ingest path a request's path names, or `undefined`: repeated and trailing slashes are
 * taken as one and none, as a client whose endpoint ends in "/" sends `//v1/batch`.
 */
export function ingestKind(path: string): MessageType | 'batch' | undefined {
  const plain = path.replace(/\/{2,}/g, '/')
  return INGEST_PATHS[plain.length > 1 && plain.endsWith('/') ? plain.slice(0, -1) : plain]
}

/** Longest wait for a request's headers, in ms. */
export const HEADERS_TIMEOUT_MS = 10_000
/** Longest wait for a whole request, headers and body, in ms: 500 KB at a slow 50 KB/s. */
export const REQUEST_TIMEOUT_MS = 10_000

/**
 * An ingest server's timeouts: a client sends a batch in one go, so one that stalls in its headers
 * or body is cut off (408) well before Node's defaults (60 s for headers, 300 s for the whole
 * request, checked every 30 s).
 */
export const INGEST_SERVER_OPTIONS: ServerOptions = {
  headersTimeout: HEADERS_TIMEOUT_MS,
  requestTimeout: REQUEST_TIMEOUT_MS,
  connectionsCheckingInterval: 1_000,
}

/** Answers with a JSON body. */
export function answerJson(
  response: ServerResponse,
  status: number,
  body: object,
  headers: Readonly<Record<string, string>> = {},
): void {
  response.writeHead(status, { ...headers, 'content-type': 'application/json' }).end(JSON.stringify(body))
}

/** Whose write keys a server takes, and what it tells a sender without one or with another. */
export interface WriteKeys<Source> {
  /**
   * The source `writeKey` belongs to, or `undefined`: at once, or once a registry is read.
   * Compared in time independent of the key (by digest).
   */
  sourceOf(writeKey: string): Source | undefined | Promise<Source | undefined>
  /**
   * Whether two lookups found the same source: by identity unless given. A source re-read
   * between the two (changed meanwhile) is another object, and still the same source.
   */
  readonly sameSource?: ((a: Source, b: Source) => boolean) | undefined
  /** Said with a 401 when no key came. */
  readonly missingHint: string
  /** Said with a 401 for a key no source has. */
  readonly wrongHint: string
}

/** A request read and checked: whose it is, its messages, and how many bytes of JSON they came in. */
export interface IngestRequest<Source> {
  readonly source: Source
  readonly messages: WireMessage[]
  readonly bytes: number
}

/** The Basic credentials' user name, or `undefined` without Basic credentials. */
function basicUser(header: string | undefined): string | undefined {
  // Stryker disable next-line StringLiteral: no header and any text Basic does not open are alike.
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '')
  if (!match?.[1]) return undefined
  const credentials = Buffer.from(match[1], 'base64').toString('utf8')
  return credentials.includes(':') ? credentials.slice(0, credentials.indexOf(':')) : credentials
}

function refuseKey<Source>(keys: WriteKeys<Source>, missing: boolean): never {
  throw new BatchRejection(401, 'ERR_UNAUTHORIZED', missing ? keys.missingHint : keys.wrongHint)
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

/**
 * Reads and checks an ingest request to `path` (one of {@link INGEST_PATHS}).
 *
 * A key in the header is checked before the body is read, so a wrong one costs no body; a key in
 * the body once it is parsed. `admit` is asked about the source as soon as it is known, and
 * refuses by throwing: before the body for a key in the header.
 *
 * @throws {@link BatchRejection} with the status and reason to answer.
 */
export async function readIngest<Source>(
  request: IncomingMessage,
  kind: MessageType | 'batch',
  keys: WriteKeys<Source>,
  admit: (source: Source) => void = () => undefined,
): Promise<IngestRequest<Source>> {
  const path = `/v1/${kind}`
  if (request.method !== 'POST')
    throw new BatchRejection(405, 'ERR_METHOD', `${path} takes POST, not ${request.method}.`)
  const user = basicUser(request.headers.authorization)
  const byHeader = user === undefined ? undefined : await keys.sourceOf(user)
  if (user !== undefined && byHeader === undefined) refuseKey(keys, false)
  if (byHeader !== undefined) admit(byHeader)
  let body: Buffer
  try {
    // gzip's own framing (stored blocks add a few bytes per 64 KiB) may take a body a little past
    // the limit that its JSON is within: the limit is on the JSON, checked as it is inflated.
    const gzip = isGzip(request.headers['content-encoding'])
    body = await readBody(request, MAX_BATCH_BYTES + (gzip ? 1_024 : 0))
    if (gzip) body = inflated(body)
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      throw new BatchRejection(413, 'ERR_BODY_TOO_LARGE', `a body may be at most ${MAX_BATCH_BYTES} bytes of JSON.`)
    throw error
  }
  const text = body.toString('utf8')
  const parsed = kind === 'batch' ? parseBatchBody(text) : parseCallBody(text, kind)
  const given = parsed['writeKey']
  let source = byHeader
  if (given !== undefined) {
    const byBody = typeof given === 'string' ? await keys.sourceOf(given) : undefined
    // A key in the body must be the header's source too, when both came.
    const same = keys.sameSource ?? ((a: Source, b: Source) => a === b)
    if (byBody === undefined || (source !== undefined && !same(byBody, source))) refuseKey(keys, false)
    if (source === undefined) admit(byBody)
    source = byBody
  }
  if (source === undefined) refuseKey(keys, true)
  return { source, messages: checkBatch(parsed), bytes: body.length }
}
