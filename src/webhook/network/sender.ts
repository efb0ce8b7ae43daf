import { sendThrough, signBody, type CallbackFailure } from '../delivery/callbacks.js'
import type { Endpoint } from './endpoint.js'
import { Limiter } from '../delivery/limiter.js'
import type { ResolvedWebhookSettings } from '../delivery/settings.js'
import type { Signer } from '../signing/signer.js'
import { signedContent, unixSeconds } from '../signing/standard-webhooks.js'
import type { WebhookResponse, WebhookTransport } from './transport.js'

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
 * attempt, for receivers to de-duplicate on), and the signatures. Literal keys (not computed
 * ones) keep each a fast object clone.
 */
function headersOf(endpoint: Endpoint, { eventId, signature }: Outgoing, standard?: Stamp): Record<string, string> {
  if (standard === undefined) {
    return signature === undefined
      ? { ...endpoint.headers, 'webhook-id': eventId }
      : { ...endpoint.headers, 'webhook-id': eventId, 'x-signature': signature }
  }
  const headers: Record<string, string> = {
    ...endpoint.headers,
    'webhook-id': eventId,
    'webhook-timestamp': standard.timestamp,
    'webhook-signature': standard.signature,
  }
  if (signature !== undefined) headers['x-signature'] = signature
  return headers
}

/** Sends an event's bytes to one endpoint, within the concurrency bounds. */
export type Sender = (endpoint: Endpoint, outgoing: Outgoing, signal?: AbortSignal) => Promise<WebhookResponse>

/**
 * A {@link Sender} over a transport, bounded overall and per URL (each endpoint's own limiter), in
 * arrival order. The in-memory destination admits rounds within its admission limit (the lower of
 * `maxConcurrency` and the URLs' bounds together) before they get here, so there these bounds
 * rarely queue; the BullMQ worker relies on them.
 */
export function createSender(
  settings: ResolvedWebhookSettings,
  transport: WebhookTransport,
  stamp: Signer | undefined,
): Sender {
  const overall = new Limiter(settings.maxConcurrency)
  return async (endpoint, outgoing, signal) => {
    const { limiter } = endpoint
    // acquire() gives a promise only when there is a wait: a free slot costs no tick.
    const urlPlace = limiter.acquire()
    if (urlPlace !== undefined) await urlPlace
    const place = overall.acquire()
    if (place !== undefined) await place
    try {
      // Unwanted while it waited for its places (another URL accepted the event): not sent.
      if (signal?.aborted) return { ok: false, failure: 'network', cause: signal.reason }
      // Signed once the request may leave, not when its round began: a request that waited for
      // its slot does not carry a timestamp that old.
      let standard: Stamp | undefined
      if (stamp !== undefined) {
        const stamped = await stampOf(stamp, outgoing, settings.timeoutMs)
        if (!('signature' in stamped)) return { ok: false, failure: 'network', cause: stamped.cause }
        standard = stamped
      }
      return await sendThrough(transport, {
        url: endpoint.url,
        origin: endpoint.origin,
        path: endpoint.path,
        headers: headersOf(endpoint, outgoing, standard),
        body: outgoing.body,
        timeoutMs: endpoint.timeoutMs,
        blockPrivateNetworks: settings.blockPrivateNetworks,
        ...(signal === undefined ? {} : { signal }),
      })
    } finally {
      overall.release()
      limiter.release()
    }
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
