import type { WebhookPlatform } from '../delivery/engine-parts.js'
import { createNodeSigner } from '../signing/node-signer.js'
import { createHttp1Transport } from '../network/http1-transport.js'

/**
 * What webhooks send and sign with on Node (`#eventwire/webhook-platform` under the "node" condition, see
 * package.json "imports"): eventwire's own HTTP/1.1 transport, which checks every resolved address when
 * `blockPrivateNetworks` is on, and `node:crypto`, which signs without a tick. The in-memory
 * destination and the BullMQ worker both run on it, so they send the same requests.
 */
export const defaultPlatform: WebhookPlatform = {
  transport: (options) => createHttp1Transport(options),
  signer: createNodeSigner,
}
