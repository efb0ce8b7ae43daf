import type { WebhookPlatform } from '../delivery/engine-parts.js'
import { createFetchTransport } from '../network/fetch-transport.js'
import { createWebCryptoSigner } from '../signing/signer.js'

/**
 * What webhooks send and sign with everywhere but Node (`#eventwire/webhook-platform` in browsers, Deno,
 * Bun and Workers, see package.json "imports"): `fetch` and Web Crypto. fetch gives no hook into
 * name resolution, so `blockPrivateNetworks` checks literal addresses only here.
 */
export const defaultPlatform: WebhookPlatform = {
  transport: () => createFetchTransport(),
  signer: createWebCryptoSigner,
}
