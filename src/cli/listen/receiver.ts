import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { verifyWebhook, type SignatureScheme } from '../../webhook/index.js'
import { BodyTooLargeError, readBody } from '../http.js'

/**
 * What the receiver made of a request's signature. `stale`: signed with the secret, but its
 * Standard Webhooks timestamp is over 5 minutes off (a replay, or a skewed clock). `unchecked`:
 * no `--secret` to check with.
 */
export type SignatureCheck = 'verified' | 'forged' | 'missing' | 'stale' | 'unchecked'

/** One request as the receiver saw and answered it. */
export interface ReceivedRequest {
  readonly event: 'request'
  readonly time: string
  readonly method: string
  readonly path: string
  readonly signature: SignatureCheck
  /** The status answered (or meant to be answered, if the sender hung up first). */
  readonly status: number
  /** Why the status is not 200. */
  readonly reason?: string
  readonly webhookId?: string
  /** The parsed JSON body; absent when the body was not JSON. */
  readonly payload?: unknown
  /** The sender closed the connection before the answer: its timeout is shorter than `--delay`. */
  readonly senderHungUp?: boolean
}

/** How the receiver checks and answers. */
export interface ReceiverOptions {
  /** Checks signatures with this secret; without it every request is `unchecked`. */
  readonly secret: string | undefined
  /** Which signature to check; by default, Standard Webhooks for a `whsec_` secret, else X-Signature. */
  readonly scheme?: SignatureScheme | undefined
  /** Share of valid requests answered 500, to rehearse retries. */
  readonly failRate: number
  /** Wait before answering, in ms, to rehearse timeouts. */
  readonly delay: number
  readonly random?: () => number
}

/** Webhook bodies carry one event of at most 32 KB of fields; this leaves room and stops abuse. */
const MAX_BODY_BYTES = 1_048_576

/** The scheme a receiver with `options` checks: as `verifyWebhook` picks it. */
export function schemeOf(options: Pick<ReceiverOptions, 'secret' | 'scheme'>): SignatureScheme {
  return options.scheme ?? (options.secret?.startsWith('whsec_') ? 'standard' : 'x-signature')
}

/** The signature check alone: what the body then is (JSON or not) the receiver judges itself. */
async function checkSignature(
  request: IncomingMessage,
  body: Buffer,
  options: ReceiverOptions,
): Promise<SignatureCheck> {
  if (options.secret === undefined) return 'unchecked'
  const verified = await verifyWebhook(
    { headers: request.headers, body },
    { secrets: options.secret, scheme: schemeOf(options) },
  )
  if (verified.ok) return 'verified'
  switch (verified.reason) {
    case 'missing_header':
      return 'missing'
    case 'timestamp_too_old':
    case 'timestamp_too_new':
      return 'stale'
    case 'bad_signature':
    case 'malformed_header':
      return 'forged'
    default:
      // Signed, but not a webhook payload (or not JSON): the body is judged below.
      return 'verified'
  }
}

function parseJson(body: Buffer): { payload?: unknown } {
  try {
    return { payload: JSON.parse(body.toString('utf8')) as unknown }
  } catch {
    return {}
  }
}

/** The answer to a request: what a careful receiver does, then `--fail-rate` on top. */
function decide(
  request: IncomingMessage,
  signature: SignatureCheck,
  isJson: boolean,
  options: ReceiverOptions,
): { status: number; reason?: string } {
  if (request.method !== 'POST') return { status: 405, reason: 'webhooks arrive as POST' }
  const standard = schemeOf(options) === 'standard'
  if (signature === 'missing') {
    const what = standard ? 'webhook-id, webhook-timestamp or webhook-signature header' : 'X-Signature header'
    return { status: 401, reason: `no ${what}` }
  }
  if (signature === 'forged') {
    const what = standard
      ? 'webhook-signature does not match the id, timestamp, body'
      : 'X-Signature does not match the body'
    return { status: 401, reason: `${what} and secret` }
  }
  if (signature === 'stale') return { status: 401, reason: 'webhook-timestamp is over 5 minutes off: a replay?' }
  if (!isJson) return { status: 400, reason: 'the body is not JSON' }
  if (options.failRate > 0 && (options.random ?? Math.random)() < options.failRate)
    return { status: 500, reason: 'failed on purpose (--fail-rate)' }
  return { status: 200 }
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  options: ReceiverOptions,
): Promise<ReceivedRequest> {
  const base = {
    event: 'request',
    time: new Date().toISOString(),
    method: request.method ?? 'GET',
    path: request.url ?? '/',
  } as const
  const webhookId = request.headers['webhook-id']
  const id = typeof webhookId === 'string' ? { webhookId } : {}
  let body: Buffer
  try {
    body = await readBody(request, MAX_BODY_BYTES)
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error
    response
      .writeHead(413, { 'content-type': 'application/json', connection: 'close' })
      .end('{"error":"body too large"}')
    return { ...base, ...id, signature: 'unchecked', status: 413, reason: error.message }
  }
  // Over the bytes received, not a decoded string: that is what the sender signed.
  const signature = await checkSignature(request, body, options)
  const parsed = parseJson(body)
  const answer = decide(request, signature, 'payload' in parsed, options)
  let hungUp = false
  response.once('close', () => (hungUp = !response.writableFinished))
  if (options.delay > 0) await sleep(options.delay)
  if (!hungUp) {
    response
      .writeHead(answer.status, { 'content-type': 'application/json' })
      .end(JSON.stringify(answer.status === 200 ? { ok: true } : { error: answer.reason }))
  }
  return { ...base, ...id, signature, ...answer, ...parsed, ...(hungUp ? { senderHungUp: true } : {}) }
}

/**
 * A webhook receiver for rehearsals: verifies `X-Signature` or Standard Webhooks signatures with
 * `verifyWebhook`, answers 401 to forged, unsigned or stale requests when it has a secret, and can
 * fail or stall on purpose.
 */
export function createReceiver(options: ReceiverOptions, onRequest: (request: ReceivedRequest) => void): Server {
  return createServer((request, response) => {
    handle(request, response, options).then(onRequest, (error: unknown) => {
      response.destroy()
      process.stderr.write(`eventwire listen: ${error instanceof Error ? error.message : String(error)}\n`)
    })
  })
}
