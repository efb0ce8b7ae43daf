import type {
  AliasMessage,
  GroupMessage,
  IdentifyMessage,
  PageMessage,
  ScreenMessage,
  TrackMessage,
} from '../core/messages.js'

/** A deletion request for a user: the receiver starts its own clean-up. */
export interface DeleteEvent {
  type: 'delete'
  userId: string
  timestamp?: Date | string
  messageId?: string
}

/**
 * A platform call to forward: the same shapes the client sends, with `type` saying which, or a
 * deletion request.
 */
export type WebhookEvent =
  | ({ type: 'identify' } & IdentifyMessage)
  | ({ type: 'track' } & TrackMessage)
  | ({ type: 'page' } & PageMessage)
  | ({ type: 'screen' } & ScreenMessage)
  | ({ type: 'group' } & GroupMessage)
  | ({ type: 'alias' } & AliasMessage)
  | DeleteEvent

/** The type names a webhook body can carry. */
export type WebhookEventType = WebhookEvent['type']
