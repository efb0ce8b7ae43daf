/** The call types the client sends and the webhook engine delivers. */
export type MessageType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias'

/** Every {@link MessageType}, in the order the docs list them. */
export const MESSAGE_TYPES: readonly MessageType[] = ['identify', 'track', 'page', 'screen', 'group', 'alias']

/** Free-form JSON object: traits, properties, context. */
export type JsonObject = Record<string, unknown>

/**
 * Per-call destination switches: destination names (case sensitive) mapped to booleans.
 * `All: false` disables every destination that is not set to `true`.
 */
export type Integrations = Record<string, unknown>

/** Fields every call accepts. */
export interface CommonFields {
  /** Extra context about the call (device, ip, library...); not attributes of the user. */
  context?: JsonObject
  /** Per-call destination switches. */
  integrations?: Integrations
  /** When the call happened: a `Date` (sent as ISO 8601 with milliseconds and `Z`) or an ISO 8601 date-time string with a time zone (`2024-05-06T10:00:00Z`), kept as given. Defaults to now. */
  timestamp?: Date | string
  /** Unique id of the call, kept as given. Defaults to a random UUID v4. */
  messageId?: string
}

/** Who a call is about: a `userId`, an `anonymousId`, or both. */
export type Identity =
  | { userId: string; anonymousId?: string }
  | { userId?: string; anonymousId: string }

/** `identify`: who the user is and their traits. */
export type IdentifyMessage = CommonFields & Identity & { traits?: JsonObject }

/** `track`: something the user did. */
export type TrackMessage = CommonFields & Identity & { event: string; properties?: JsonObject }

/** `page`: a web page the user viewed. Go's `Page.Traits` is sent as `properties`. */
export type PageMessage = CommonFields &
  Identity & { name?: string; category?: string; properties?: JsonObject }

/** `screen`: a mobile screen the user viewed. */
export type ScreenMessage = CommonFields &
  Identity & { name?: string; category?: string; properties?: JsonObject }

/** `group`: ties the user to a company, organization, account, project or team. */
export type GroupMessage = CommonFields & Identity & { groupId: string; traits?: JsonObject }

/** `alias`: links a previous id to the user's id. */
export type AliasMessage = CommonFields & { userId: string; previousId: string; anonymousId?: string }

/** Input of each call type, by type name. */
export interface MessageByType {
  identify: IdentifyMessage
  track: TrackMessage
  page: PageMessage
  screen: ScreenMessage
  group: GroupMessage
  alias: AliasMessage
}

/** A message as it goes on the wire: validated, with `type`, `messageId` and `timestamp` filled in. */
export interface WireMessage {
  type: MessageType
  messageId: string
  timestamp: string
  [field: string]: unknown
}
