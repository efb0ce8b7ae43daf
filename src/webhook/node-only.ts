/**
 * What only Node offers the webhook engine: an undici transport for a private CA or client certificates, passed as the `transport` setting.
 *
 * @module eventwire/webhook/node
 */
// `eventwire/webhook/node`: what only Node can offer, for users who configure
// `WebhookDestination` on Node further (a private CA, client certificates), passed as the `transport`
// setting.
export { createUndiciTransport } from './network/undici-transport.js'
export type { UndiciTransportOptions } from './network/undici-transport.js'
