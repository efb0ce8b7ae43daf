import type { WebhookPlatform } from './engine.js'
import { createNodeSigner } from './node-signer.js'
import { createUndiciTransport } from './undici-transport.js'

/**
 * What Node builds send and sign with: undici's `Pool`, which checks every resolved address when
 * `blockPrivateNetworks` is on, and `node:crypto`, which signs without a tick. The in-memory
 * destination and the BullMQ worker both run on it, so they send the same requests.
 */
export const NODE_PLATFORM: WebhookPlatform = {
  transport: (options) => createUndiciTransport(options),
  signer: createNodeSigner,
}
