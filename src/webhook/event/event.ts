import type {
  AliasMessage,
  GroupMessage,
  IdentifyMessage,
  JsonObject,
  PageMessage,
  ScreenMessage,
  TrackMessage,
} from '../../core/messages.js'

/** A deletion request for a user: the receiver starts its own clean-up. */
export interface DeleteEvent {
  type: 'delete'
  userId: string
  timestamp?: Date | string | undefined
  messageId?: string | undefined
}

/**
 * A platform call to forward: the same shapes the client sends, with `type` saying which, or a
 * deletion request. `Data` is the type of the call's `traits` or `properties`, inferred by the
 * methods that take an event, so that an interface fits (see `JsonObjectInput`).
 */
export type WebhookEvent<Data extends object = JsonObject> =
  | ({ type: 'identify' } & IdentifyMessage<Data>)
  | ({ type: 'track' } & TrackMessage<Data>)
  | ({ type: 'page' } & PageMessage<Data>)
  | ({ type: 'screen' } & ScreenMessage<Data>)
  | ({ type: 'group' } & GroupMessage<Data>)
  | ({ type: 'alias' } & AliasMessage)
  | DeleteEvent

/** The type names a webhook body can carry. */
export type WebhookEventType = WebhookEvent['type']
