export { WebhookDestination } from './fetch-destination.js'
export { WebhookDestinationBase } from './destination.js'
export type { WebhookPlatform } from './destination.js'
export { createWebCryptoSigner } from './signer.js'
export type { Signer } from './signer.js'
export type {
  DeliveryResult,
  RetryNotice,
  WebhookCloseOptions,
  WebhookDestinationEvents,
  WebhookUrlResult,
  WebhookUrlStatus,
} from './destination.js'
export type { WebhookEntry, WebhookSettings } from './settings.js'
export { MAX_WEBHOOKS, USER_AGENT } from './settings.js'
export { toWebhookPayload } from './payload.js'
export type { WebhookPayload } from './payload.js'
export type { DeleteEvent, WebhookEvent, WebhookEventType } from './event.js'
export { DESTINATION_NAME, isEnabledFor } from './integrations.js'
export { signPayload, verifySignature } from './signature.js'
export type { RawBody } from './signature.js'
export { AudienceSync, toSnakeCase } from './audience.js'
export { createFetchTransport } from './fetch-transport.js'
export type { TransportFailure, WebhookRequest, WebhookResponse, WebhookTransport } from './transport.js'
export { WebhookError } from './webhook-error.js'
export type { WebhookErrorCode } from './webhook-error.js'
export { EventwireError } from '../core/errors/eventwire-error.js'
export type { ErrorCode } from '../core/errors/eventwire-error.js'
export { ClosedError } from '../core/errors/closed-error.js'
export { OptionsError } from '../core/errors/options-error.js'
export { ValidationError } from '../core/errors/validation-error.js'
export type { Listener } from '../core/emitter.js'
