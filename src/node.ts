// The Node build of `eventwire` (picked by the "node" export condition): the same API as every
// other runtime gets, with a Client that sends through undici's Pool unless given a `fetch`. The
// list below is src/index.ts's, name for name, with Client taken from the Node build; a test
// (test/node-entry.test.ts) fails when the two lists differ. An explicit list rather than
// `export *`, so that a name added to one entry cannot slip into the other unnoticed.
export { Client } from './client/node-client.js'
export type { ClientEvents, CloseOptions, RetryInfo, SentInfo } from './client/client.js'
export type { ClientOptions, RetryOptions } from './client/options.js'
export type { MessageCallback, MessageRecord } from './client/batch.js'
export { DeliveryError } from './client/delivery-error.js'
export type { DeliveryErrorCode } from './client/delivery-error.js'
export { EventwireError, isEventwireError } from './core/errors/eventwire-error.js'
export type { ErrorCode } from './core/errors/eventwire-error.js'
export { ValidationError } from './core/errors/validation-error.js'
export type { ValidationErrorCode } from './core/errors/validation-error.js'
export { MessageTooLargeError } from './core/errors/message-too-large-error.js'
export { OptionsError } from './core/errors/options-error.js'
export { ClosedError } from './core/errors/closed-error.js'
export type { Logger } from './core/debug.js'
export type { Listener } from './core/emitter.js'
export { MAX_BATCH_BYTES, MAX_MESSAGE_BYTES } from './core/limits.js'
export { checkMessage } from './core/check-message.js'
export { MESSAGE_TYPES } from './core/messages.js'
export type {
  AliasMessage,
  AnonymousIdIfNoUserId,
  CommonFields,
  GroupFields,
  GroupMessage,
  Identity,
  IdentifyFields,
  IdentifyMessage,
  Integrations,
  JsonObject,
  MessageByType,
  MessageType,
  PageMessage,
  ScreenMessage,
  TrackFields,
  TrackMessage,
  UserIdIfNoAnonymousId,
  ViewFields,
  WireMessage,
} from './core/messages.js'
export type { JsonInput, JsonObjectInput, JsonPrimitive, JsonSerializable, JsonValue } from './core/json-value.js'
