/**
 * Webhook delivery and verification on every runtime: `WebhookDestination` (one destination, or many through `destinations`), `verifyWebhook`, `verifySignature`, `signPayload`, `toWebhookPayload` and `AudienceSync`.
 *
 * @module eventwire/webhook
 */
export { WebhookDestination } from './delivery/destination.js'
export type {
  DeliverOptions,
  WebhookCloseOptions,
  WebhookDestinationEvents,
  WebhookEventInput,
  WebhookPlanOption,
  UrlStateNotice,
} from './delivery/destination-base.js'
export type { UrlBacklog } from './delivery/url-lanes.js'
export type { CircuitState } from './delivery/circuit-breaker.js'
export type {
  AttemptNotice,
  DeliveryResult,
  RetryNotice,
  WebhookUrlResult,
  WebhookUrlStatus,
} from './delivery/result.js'
export type { DestinationsSettings, WebhookEntry, WebhookSettings } from './delivery/settings.js'
export { MemoryDestinations } from './delivery/memory-destinations.js'
export type { SetMemoryDestinationOptions } from './delivery/memory-destinations.js'
export type { Destination, StoredDestination } from './delivery/destination-record.js'
export { DestinationConflictError } from './delivery/destination-conflict-error.js'
export { UnknownDestinationError } from './delivery/unknown-destination-error.js'
export { USER_AGENT } from './delivery/settings.js'
export { toWebhookPayload } from './event/payload.js'
export type { WebhookPayload } from './event/payload.js'
export type { DeleteEvent, WebhookEvent, WebhookEventType } from './event/event.js'
export { DESTINATION_NAME } from './event/integrations.js'
export { signPayload, verifySignature } from './signing/signature.js'
export { verifyWebhook } from './signing/verify-webhook.js'
export { generateStandardSecret } from './signing/standard-webhooks.js'
export type {
  PlannedPayloadFields,
  PlannedWebhookPayload,
  ReceivedHeaders,
  ReceivedWebhook,
  SignatureScheme,
  VerifiedPayload,
  VerifiedWebhook,
  VerifyWebhookOptions,
  WebhookRefusal,
} from './signing/verify-webhook.js'
export type { RawBody } from './signing/signature.js'
export { AudienceSync } from './event/audience.js'
export { createFetchTransport } from './network/fetch-transport.js'
export type { TransportFailure, WebhookRequest, WebhookResponse, WebhookTransport } from './network/transport.js'
export { WebhookError } from './delivery/webhook-error.js'
export type { WebhookErrorCode } from './delivery/webhook-error.js'
export { EventwireError, isEventwireError } from '../core/errors/eventwire-error.js'
export type { ErrorCode } from '../core/errors/eventwire-error.js'
export { ClosedError } from '../core/errors/closed-error.js'
export { OptionsError } from '../core/errors/options-error.js'
export { ValidationError } from '../core/errors/validation-error.js'
export type { Listener } from '../core/emitter.js'
