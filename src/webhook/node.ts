// The Node build of `eventwire/webhook` (picked by the "node" export condition): the same API as
// every other runtime gets, with a WebhookDestination that sends through undici's Pool and signs
// with node:crypto. The explicit export below takes precedence over the star export's. Node-only
// additions live in `eventwire/webhook/node` instead, so that the types of `eventwire/webhook` are
// the same whichever condition a resolver picks (TypeScript's "bundler" resolution never picks
// "node").
export * from './index.js'
export { WebhookDestination } from './node-destination.js'
