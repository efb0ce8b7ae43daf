import { createEndpoints, type Endpoint } from '../network/endpoint.js'
import { createSender, createUnboundedSender, type Sender } from './sender.js'
import { resolveWebhookSettings, type ResolvedWebhookSettings, type WebhookSettings } from './settings.js'
import { signWithEach, type HmacFormat, type Signer } from '../signing/signer.js'
import type { WebhookTransport } from '../network/transport.js'

/** The defaults a build of the webhook module brings: how it sends and how it signs. */
export interface WebhookPlatform {
  /** `blockPrivateNetworks`: check every resolved address, where the platform can. */
  readonly transport: (options: { blockPrivateNetworks: boolean }) => WebhookTransport
  /** Signs with one key in a format; a string key as its UTF-8 bytes. */
  readonly signer: (format: HmacFormat, secret: string | Uint8Array) => Signer
}

/** The parts every delivery engine (in memory, BullMQ) runs on, built from the settings in one place. */
export interface EngineParts {
  readonly settings: ResolvedWebhookSettings
  /** The configured URLs, in the order configured: what each new delivery state targets. */
  readonly endpoints: readonly Endpoint[]
  readonly transport: WebhookTransport
  /** Sends within `maxConcurrency` and each URL's `maxConcurrencyPerUrl` (the BullMQ worker). */
  readonly send: Sender
  /** Sends at once: for a caller that bounds its requests itself (the in-memory lanes). */
  readonly sendUnbounded: Sender
  /** The `X-Signature` of a body: one hex HMAC-SHA1 per `sharedSecret`, comma-separated. */
  readonly sign: Signer | undefined
  /**
   * The `webhook-signature` of Standard Webhooks' signed content (`{id}.{timestamp}.{body}`): one
   * `v1,<base64 HMAC-SHA256>` per `standardSecret`, space-separated.
   */
  readonly stamp: Signer | undefined
}

/**
 * Checks the settings and builds the sending and signing pieces, with the platform's defaults
 * where the settings name no `transport`.
 *
 * @throws {@link OptionsError} naming the first setting it cannot use.
 */
export function createEngine(
  settings: WebhookSettings,
  platform: WebhookPlatform,
  takes?: Readonly<Record<string, true>>,
): EngineParts {
  const resolved = resolveWebhookSettings(settings, takes)
  const transport = resolved.transport ?? platform.transport({ blockPrivateNetworks: resolved.blockPrivateNetworks })
  const stamp = signerFor(platform, 'sha256-base64', resolved.standardKeys, (base64) => `v1,${base64}`, ' ')
  const sendUnbounded = createUnboundedSender(resolved, transport, stamp)
  return {
    settings: resolved,
    endpoints: createEndpoints(resolved),
    transport,
    send: createSender(resolved, sendUnbounded),
    sendUnbounded,
    sign: signerFor(platform, 'sha1-hex', resolved.sharedSecrets, (hex) => hex, ','),
    stamp,
  }
}

function signerFor(
  platform: WebhookPlatform,
  format: HmacFormat,
  secrets: readonly (string | Uint8Array)[],
  shape: (signature: string) => string,
  separator: string,
): Signer | undefined {
  if (secrets.length === 0) return undefined
  return signWithEach(
    secrets.map((secret) => platform.signer(format, secret)),
    shape,
    separator,
  )
}
