import type { JsonObject, JsonObjectInput, JsonValue } from './json-value.js'

export type { JsonObject } from './json-value.js'

/** The call types the client sends and the webhook engine delivers. */
export type MessageType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias'

/** Every {@link MessageType}, in the order the docs list them. */
export const MESSAGE_TYPES: readonly MessageType[] = ['identify', 'track', 'page', 'screen', 'group', 'alias']

/**
 * Per-call destination switches: destination names (case sensitive) mapped to booleans, or to an
 * object of options for that destination. `All: false` disables every destination that is not set
 * to `true`.
 */
export interface Integrations {
  [destination: string]: JsonValue | undefined
}

// Every optional field also takes `undefined`, which means absent: under exactOptionalPropertyTypes
// a field filled from a `string | undefined` (an environment variable, an optional argument) must
// still compile, and the run-time checks already skip `undefined` fields.

/** Fields every call accepts. */
export interface CommonFields {
  /**
   * Extra context about the call (device, ip, library...); not attributes of the user. An interface
   * without an index signature does not fit {@link JsonObject}: spread it (`{ ...context }`).
   */
  context?: JsonObject | undefined
  /** Per-call destination switches. */
  integrations?: Integrations | undefined
  /** When the call happened: a `Date` (sent as ISO 8601 with milliseconds and `Z`) or an ISO 8601 date-time string with a time zone (`2024-05-06T10:00:00Z`), kept as given. Defaults to now. */
  timestamp?: Date | string | undefined
  /** Unique id of the call, kept as given. Defaults to a random UUID v4. */
  messageId?: string | undefined
}

// The two halves of Identity are named for the rule they carry, because tsc prints the name of one
// of them when a call has neither id: "Property 'anonymousId' is missing ... but required in type
// 'AnonymousIdIfNoUserId'" says what to add, where an anonymous object type would not.

/** The half of {@link Identity} for calls with a `userId`, and maybe an `anonymousId` as well. */
export interface UserIdIfNoAnonymousId {
  userId: string
  anonymousId?: string | undefined
}

/** The half of {@link Identity} for calls with an `anonymousId`, and maybe a `userId` as well. */
export interface AnonymousIdIfNoUserId {
  userId?: string | undefined
  anonymousId: string
}

/** Who a call is about: a `userId`, an `anonymousId`, or both. */
export type Identity = UserIdIfNoAnonymousId | AnonymousIdIfNoUserId

// Each message type is its own fields first, then Identity: tsc checks an intersection in order and
// reports the first part that fails, so a call without `event` is told about `event` rather than
// about an id it may well have.

/** The fields of `identify` besides {@link Identity}; `Traits` is the type of `traits` (see {@link JsonObjectInput}). */
export interface IdentifyFields<Traits extends object = JsonObject> extends CommonFields {
  /** What is known about the user: email, name, plan... */
  traits?: JsonObjectInput<Traits> | undefined
}

/** `identify`: who the user is and their traits. */
export type IdentifyMessage<Traits extends object = JsonObject> = IdentifyFields<Traits> & Identity

/** The fields of `track` besides {@link Identity}; `Properties` is the type of `properties` (see {@link JsonObjectInput}). */
export interface TrackFields<Properties extends object = JsonObject> extends CommonFields {
  /** What the user did, e.g. `'Signed Up'`. */
  event: string
  /** Details of the event. */
  properties?: JsonObjectInput<Properties> | undefined
}

/** `track`: something the user did. */
export type TrackMessage<Properties extends object = JsonObject> = TrackFields<Properties> & Identity

/** The fields of `page` and `screen` besides {@link Identity}; `Properties` is the type of `properties` (see {@link JsonObjectInput}). */
export interface ViewFields<Properties extends object = JsonObject> extends CommonFields {
  /** Name of the page or screen. */
  name?: string | undefined
  /** Category of the page or screen. */
  category?: string | undefined
  /** Details of the view: url, path, title... */
  properties?: JsonObjectInput<Properties> | undefined
}

/** `page`: a web page the user viewed. Go's `Page.Traits` is sent as `properties`. */
export type PageMessage<Properties extends object = JsonObject> = ViewFields<Properties> & Identity

/** `screen`: a mobile screen the user viewed. */
export type ScreenMessage<Properties extends object = JsonObject> = ViewFields<Properties> & Identity

/** The fields of `group` besides {@link Identity}; `Traits` is the type of `traits` (see {@link JsonObjectInput}). */
export interface GroupFields<Traits extends object = JsonObject> extends CommonFields {
  /** The group's id. */
  groupId: string
  /** What is known about the group: name, industry, size... */
  traits?: JsonObjectInput<Traits> | undefined
}

/** `group`: ties the user to a company, organization, account, project or team. */
export type GroupMessage<Traits extends object = JsonObject> = GroupFields<Traits> & Identity

/** `alias`: links a previous id to the user's id. */
export interface AliasMessage extends CommonFields {
  /** The user's id from now on. */
  userId: string
  /** The id the user had so far, often an anonymous one. */
  previousId: string
  anonymousId?: string | undefined
}

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
