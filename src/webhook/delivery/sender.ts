import type { Limiter } from '../../core/limiter.js'
import { sendThrough, signBody, type CallbackFailure } from './callbacks.js'
import type { Endpoint } from '../network/endpoint.js'
import type { ResolvedWebhookSettings } from './settings.js'
import type { Signer } from '../signing/signer.js'
import { signedContent, unixSeconds } from '../signing/standard-webhooks.js'
import type { WebhookResponse, WebhookTransport } from '../network/transport.js'

/** What every attempt of one event carries. */
export interface Outgoing {
  readonly eventId: string
  /** The JSON body, serialized once; its UTF-8 encoding is what is signed and sent. */
  readonly body: string
  readonly signature: string | undefined
}

/** Under Standard Webhooks, one request's `webhook-timestamp` and `webhook-signature`. */
interface Stamp {
  readonly timestamp: string
  readonly signature: string
}

/**
 * The headers of one request: the URL's own, the event's stable `webhook-id` (the same on every
 * attempt, for receivers to de-duplicate on), and the signatures. A copy of the endpoint's shape
 * for them (see {@link Endpoint.headerShapes}) with the values set.
 */
function headersOf(endpoint: Endpoint, { eventId, signature }: Outgoing, standard?: Stamp): Record<string, string> {
  const shapes = endpoint.headerShapes
  let headers: Record<string, string>
  if (standard === undefined) {
    headers = signature === undefined ? { ...shapes.unsigned } : { ...shapes.signed }
  } else {
    headers = signature === undefined ? { ...shapes.standard } : { ...shapes.both }
    headers['webhook-timestamp'] = standard.timestamp
    headers['webhook-signature'] = standard.signature
  }
  headers['webhook-id'] = eventId
  if (signature !== undefined) headers['x-signature'] = signature
  return headers
}

/**
 * Sends an event's bytes to one endpoint, within the concurrency bounds. Never rejects: every
 * failure, a transport's throw or rejection included, is an answer (see `sendThrough`). The
 * in-memory lanes count on it and keep no rejection handler.
 */
export type Sender = (endpoint: Endpoint, outgoing: Outgoing, signal?: AbortSignal) => Promise<WebhookResponse>

/**
 * `send` (an unbounded sender) bounded overall (`overall`: `maxConcurrency` places, shared by
 * every destination) and per URL (each endpoint's limiter), in arrival order: what the BullMQ
 * worker sends with. The in-memory lanes bound their requests themselves (each URL's slots, a
 * share of `maxConcurrency`) and send with {@link createUnboundedSender}.
 */
export function createSender(overall: Limiter, send: Sender): Sender {
  return async (endpoint, outgoing, signal) => {
    const { limiter } = endpoint
    // acquire() gives a promise only when there is a wait: a free slot costs no tick.
    const urlPlace = limiter.acquire()
    if (urlPlace !== undefined) await urlPlace
    const place = overall.acquire()
    if (place !== undefined) await place
    try {
      return await send(endpoint, outgoing, signal)
    } finally {
      overall.release()
      limiter.release()
    }
  }
}

/**
 * A {@link Sender} over a transport with no bounds of its own: its caller bounds the requests in
 * flight. No async frame: without Standard Webhooks (or with a synchronous signer) an attempt is
 * the transport's promise and nothing more.
 */
export function createUnboundedSender(
  settings: ResolvedWebhookSettings,
  transport: WebhookTransport,
  stamp: Signer | undefined,
): Sender {
  const { blockPrivateNetworks } = settings
  const post = (endpoint: Endpoint, outgoing: Outgoing, signal: AbortSignal | undefined, standard?: Stamp) =>
    sendThrough(transport, {
      url: endpoint.url,
      origin: endpoint.origin,
      path: endpoint.path,
      headers: headersOf(endpoint, outgoing, standard),
      body: outgoing.body,
      timeoutMs: endpoint.timeoutMs,
      blockPrivateNetworks,
      signal,
    })
  return (endpoint, outgoing, signal) => {
    // Unwanted while it waited for its places (another URL accepted the event): not sent.
    if (signal?.aborted) return Promise.resolve({ ok: false, failure: 'network', cause: signal.reason })
    if (stamp === undefined) return post(endpoint, outgoing, signal)
    // Signed once the request may leave, not when its round began: a request that waited for
    // its slot does not carry a timestamp that old.
    const stamped = stampOf(stamp, outgoing, settings.timeoutMs)
    const sendStamped = (standard: Stamp | CallbackFailure): Promise<WebhookResponse> =>
      'signature' in standard
        ? post(endpoint, outgoing, signal, standard)
        : Promise.resolve({ ok: false, failure: 'network', cause: standard.cause })
    return stamped instanceof Promise ? stamped.then(sendStamped) : sendStamped(stamped)
  }
}

/**
 * This request's Standard Webhooks timestamp (now) and signature, or why it has none: nothing is
 * sent unsigned, and the attempt counts as failed (retried as a network failure would be).
 */
function stampOf(
  stamp: Signer,
  { eventId, body }: Outgoing,
  timeoutMs: number,
): Stamp | CallbackFailure | Promise<Stamp | CallbackFailure> {
  const timestamp = String(unixSeconds(Date.now()))
  const signing = signBody(stamp, signedContent(eventId, timestamp, body), timeoutMs)
  const stamped = (signature: string | CallbackFailure): Stamp | CallbackFailure =>
    typeof signature === 'string' ? { timestamp, signature } : signature
  return signing instanceof Promise ? signing.then(stamped) : stamped(signing)
}
