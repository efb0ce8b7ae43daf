import type { Endpoint } from '../network/endpoint.js'
import type { DeliveryRounds } from './rounds.js'
import type { Sender } from './sender.js'
import type { Signer } from '../signing/signer.js'

/** Why the events of a destination are no longer sent: each URL of theirs still pending ends with it. */
export type RouteEnd = 'ERR_DESTINATION_DISABLED' | 'ERR_UNKNOWN_DESTINATION'

/**
 * One version of one destination as the in-memory engine delivers it: its URLs with their
 * headers, how its events are signed and sent, its mode, and the rounds that report its events.
 * A change of the destination makes a new route and links the old one to it: each waiting event
 * follows the link at its next attempt, so a change reaches every event without a list of them.
 */
export interface Route {
  /** The registry destination; `undefined` for the engine's own `webhooks`. */
  readonly destination: string | undefined
  /** Its URLs, in the order configured. */
  readonly endpoints: readonly Endpoint[]
  readonly send: Sender
  /** The `X-Signature` of a body; none without `sharedSecret`. */
  readonly sign: Signer | undefined
  readonly mode: 'any' | 'each'
  readonly rounds: DeliveryRounds
  /** Set for a destination disabled or deleted: nothing more is sent to its URLs. */
  readonly ended: RouteEnd | undefined
  /** The version that replaced this one; `undefined` while this is the latest. */
  next: Route | undefined
}
