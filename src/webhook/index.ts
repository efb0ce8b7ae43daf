/**
 * Webhook delivery and verification on every runtime: `WebhookDestination`, `verifyWebhook`, `verifySignature`, `signPayload`, `toWebhookPayload` and `AudienceSync`.
 *
 * @module eventwire/webhook
 */
export { WebhookDestination } from './webhook-destination.js'
export type {
  WebhookCloseOptions,
  WebhookDestinationEvents,
  WebhookEventInput,
  WebhookPlanOption,
  UrlStateNotice,
} from './destination.js'
export type { UrlBacklog } from './url-lanes.js'
export type { CircuitState } from './circuit-breaker.js'
export type { AttemptNotice, DeliveryResult, RetryNotice, WebhookUrlResult, WebhookUrlStatus } from './result.js'
export type { WebhookEntry, WebhookSettings } from './settings.js'
export { USER_AGENT } from './settings.js'
export { toWebhookPayload } from './payload.js'
export type { WebhookPayload } from './payload.js'
export type { DeleteEvent, WebhookEvent, WebhookEventType } from './event.js'
export { DESTINATION_NAME } from './integrations.js'
export { signPayload, verifySignature } from './signature.js'
export { verifyWebhook } from './verify-webhook.js'
export { generateStandardSecret } from './standard-webhooks.js'
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
} from './verify-webhook.js'
export type { RawBody } from './signature.js'
export { AudienceSync } from './audience.js'
export { createFetchTransport } from './fetch-transport.js'
export type { TransportFailure, WebhookRequest, WebhookResponse, WebhookTransport } from './transport.js'
export { WebhookError } from './webhook-error.js'
export type { WebhookErrorCode } from './webhook-error.js'
export { EventwireError, isEventwireError } from '../core/errors/eventwire-error.js'
export type { ErrorCode } from '../core/errors/eventwire-error.js'
export { ClosedError } from '../core/errors/closed-error.js'
export { OptionsError } from '../core/errors/options-error.js'
export { ValidationError } from '../core/errors/validation-error.js'
export type { Listener } from '../core/emitter.js'
