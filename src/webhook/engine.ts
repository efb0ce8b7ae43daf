import { createEndpoints, type Endpoint } from './endpoint.js'
import { createSender, type Sender } from './sender.js'
import { resolveWebhookSettings, type ResolvedWebhookSettings, type WebhookSettings } from './settings.js'
import type { Signer } from './signer.js'
import type { WebhookTransport } from './transport.js'

/** The defaults a build of the webhook module brings: how it sends and how it signs. */
export interface WebhookPlatform {
  /** `blockPrivateNetworks`: check every resolved address, where the platform can. */
  readonly transport: (options: { blockPrivateNetworks: boolean }) => WebhookTransport
  readonly signer: (secret: string) => Signer
}

/** What every delivery engine (in memory, BullMQ) runs on, read from the settings in one place. */
export interface Engine {
  readonly settings: ResolvedWebhookSettings
  /** The configured URLs, in the order configured: what each new delivery state targets. */
  readonly endpoints: readonly Endpoint[]
  readonly transport: WebhookTransport
  readonly send: Sender
  readonly sign: Signer | undefined
}

/**
 * Checks the settings and builds the sending and signing pieces, with the platform's defaults
 * where the settings name no `transport`.
 *
 * @throws {@link OptionsError} naming the first setting it cannot use.
 */
export function createEngine(settings: WebhookSettings, platform: WebhookPlatform): Engine {
  const resolved = resolveWebhookSettings(settings)
  const transport = resolved.transport ?? platform.transport({ blockPrivateNetworks: resolved.blockPrivateNetworks })
  return {
    settings: resolved,
    endpoints: createEndpoints(resolved),
    transport,
    send: createSender(resolved, transport),
    sign: resolved.sharedSecret === undefined ? undefined : platform.signer(resolved.sharedSecret),
  }
}
