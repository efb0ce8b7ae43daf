/**
 * The analytics `Client`: validated calls, queued and sent in batches to `POST {endpoint}/v1/batch`, with tracking plans, middleware, errors and the message types.
 *
 * @module eventwire
 */
export { Client } from './client/client.js'
export type { ClientEvents, CloseOptions, PlanViolationInfo, RetryInfo, SentInfo } from './client/client.js'
export type { ClientOptions, PlanOption, RetryOptions } from './client/options.js'
export type { MessageCallback, MessageOutcome } from './client/batch.js'
export type {
  DroppedInfo,
  Middleware,
  MiddlewareCall,
  MiddlewareMessage,
  PlannedMiddlewareMessage,
  SentMessage,
} from './client/middleware.js'
export { DeliveryError } from './client/delivery-error.js'
export type { DeliveryErrorCode, MessageRecord } from './client/delivery-error.js'
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
export { definePlan } from './core/plan.js'
export type {
  GroupInput,
  IdentifyInput,
  NoPlan,
  OptionalField,
  PlannedEventName,
  PlannedInput,
  PlannedOutput,
  PlannedProperties,
  PlannedTrackMessage,
  SchemaPlan,
  TrackInput,
  TrackingPlan,
} from './core/plan.js'
export type { SchemaIssue, SchemaResult, StandardSchema } from './core/standard-schema.js'
