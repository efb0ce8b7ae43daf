import type { WebhookPlatform } from '../delivery/engine-parts.js'
import { createNodeSigner } from '../signing/node-signer.js'
import { createUndiciTransport } from '../network/undici-transport.js'

/**
 * What webhooks send and sign with on Node (`#eventwire/webhook-platform` under the "node" condition, see
 * package.json "imports"): undici's `Pool`, which checks every resolved address when
 * `blockPrivateNetworks` is on, and `node:crypto`, which signs without a tick. The in-memory
 * destination and the BullMQ worker both run on it, so they send the same requests.
 */
export const defaultPlatform: WebhookPlatform = {
  transport: (options) => createUndiciTransport(options),
  signer: createNodeSigner,
}
