// `eventwire/webhook/node`: what only Node can offer, for users who configure
// `WebhookDestination` on Node further (a private CA, client certificates), passed as the `transport`
// setting.
export { createUndiciTransport } from './undici-transport.js'
export type { UndiciTransportOptions } from './undici-transport.js'
