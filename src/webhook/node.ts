// The Node build of `eventwire/webhook` (picked by the "node" export condition): the same API,
// with a WebhookDestination that sends through undici's Pool and signs with node:crypto. The
// explicit export below takes precedence over the one of the same name in the star export.
export * from './index.js'
export { WebhookDestination } from './node-destination.js'
export { createUndiciTransport } from './undici-transport.js'
export { createNodeSigner } from './node-signer.js'
export type { UndiciTransportOptions } from './undici-transport.js'
