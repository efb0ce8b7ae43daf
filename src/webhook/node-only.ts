/**
 * What only Node offers the webhook engine, passed as the `transport` setting: the Node default
 * transport with TLS options of your own (a private CA, client certificates).
 *
 * @module eventwire/webhook/node
 */
// `eventwire/webhook/node`: what only Node can offer, for users who configure
// `WebhookDestination` on Node further, passed as the `transport` setting.
export { createHttp1Transport } from './network/http1-transport.js'
export type { Http1TransportOptions } from './network/http1-transport.js'
