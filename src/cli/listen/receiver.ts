import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { verifySignature } from '../../webhook/index.js'
import { BodyTooLargeError, readBody } from '../http.js'

/** What the receiver made of a request's `X-Signature`. `unchecked`: no `--secret` to check with. */
export type SignatureCheck = 'verified' | 'forged' | 'missing' | 'unchecked'

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
  /** Checks `X-Signature` with this shared secret; without it every request is `unchecked`. */
  readonly secret: string | undefined
  /** Share of valid requests answered 500, to rehearse retries. */
  readonly failRate: number
  /** Wait before answering, in ms, to rehearse timeouts. */
  readonly delay: number
  readonly random?: () => number
}

/** Webhook bodies carry one event of at most 32 KB of fields; this leaves room and stops abuse. */
const MAX_BODY_BYTES = 1_048_576

async function checkSignature(
  body: Buffer,
  header: string | string[] | undefined,
  secret: string | undefined,
): Promise<SignatureCheck> {
  if (secret === undefined) return 'unchecked'
  if (typeof header !== 'string' || header === '') return 'missing'
  return (await verifySignature(body, header, secret)) ? 'verified' : 'forged'
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
  if (signature === 'missing') return { status: 401, reason: 'no X-Signature header' }
  if (signature === 'forged') return { status: 401, reason: 'X-Signature does not match the body and secret' }
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
  const signature = await checkSignature(body, request.headers['x-signature'], options.secret)
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
 * A webhook receiver for rehearsals: verifies `X-Signature` with `verifySignature`, answers 401 to
 * forged or unsigned requests when it has a secret, and can fail or stall on purpose.
 */
export function createReceiver(options: ReceiverOptions, onRequest: (request: ReceivedRequest) => void): Server {
  return createServer((request, response) => {
    handle(request, response, options).then(onRequest, (error: unknown) => {
      response.destroy()
      process.stderr.write(`eventwire listen: ${error instanceof Error ? error.message : String(error)}\n`)
    })
  })
}
