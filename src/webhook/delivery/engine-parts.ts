import { Limiter } from '../../core/limiter.js'
import { createEndpoints, urlLimiters, type Endpoint } from '../network/endpoint.js'
import { createSender, createUnboundedSender, type Sender } from './sender.js'
import { resolveWebhookSettings, type ResolvedWebhookSettings, type WebhookSettings } from './settings.js'
import { signWithEach, type HmacFormat, type Signer } from '../signing/signer.js'
import type { WebhookTransport } from '../network/transport.js'
import type { ResolvedDestination } from './destination-record.js'

/** The defaults a build of the webhook module brings: how it sends and how it signs. */
export interface WebhookPlatform {
  /** `blockPrivateNetworks`: check every resolved address, where the platform can. */
  readonly transport: (options: { blockPrivateNetworks: boolean }) => WebhookTransport
  /** Signs with one key in a format; a string key as its UTF-8 bytes. */
  readonly signer: (format: HmacFormat, secret: string | Uint8Array) => Signer
}

/** What every destination of one engine shares: its transport and the bounds on its requests. */
export interface SharedParts {
  readonly platform: WebhookPlatform
  readonly transport: WebhookTransport
  /** `maxConcurrency` places over every URL of every destination (the BullMQ worker's sender). */
  readonly overall: Limiter
  /** Each URL's `maxConcurrencyPerUrl` places, over every destination that lists it. */
  readonly limiterFor: (url: string) => Limiter
}

/**
 * The parts a delivery engine (in memory, BullMQ) runs one destination's events on, built from the
 * settings in one place: what the engine's settings say for all destinations, and what this
 * destination says (URLs, secrets, mode).
 */
export interface EngineParts {
  readonly settings: ResolvedWebhookSettings
  /** The destination's URLs, in the order configured: what each new delivery state targets. */
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
  /** What this engine's other destinations share with this one (see {@link partsFor}). */
  readonly shared: SharedParts
}

/**
 * Checks the settings and builds the sending and signing pieces, with the platform's defaults
 * where the settings name no `transport`. With `ownWebhooks: 'optional'` (a worker that serves
 * the registry's destinations), settings without `webhooks` give parts without endpoints.
 *
 * @throws {@link OptionsError} naming the first setting it cannot use.
 */
export function createEngine(
  settings: WebhookSettings,
  platform: WebhookPlatform,
  takes?: Readonly<Record<string, true>>,
  ownWebhooks?: 'required' | 'optional',
): EngineParts {
  const resolved = resolveWebhookSettings(settings, takes, ownWebhooks)
  const shared: SharedParts = {
    platform,
    transport: resolved.transport ?? platform.transport({ blockPrivateNetworks: resolved.blockPrivateNetworks }),
    overall: new Limiter(resolved.maxConcurrency),
    limiterFor: urlLimiters(resolved.maxConcurrencyPerUrl),
  }
  return assemble(resolved, shared)
}

/**
 * The parts of one destination of the registry under an engine's settings: its URLs, secrets and
 * mode; the engine's timeouts, retry window, transport and bounds.
 */
export function partsFor(engine: EngineParts, destination: ResolvedDestination): EngineParts {
  const { webhooks, sharedSecrets, standardKeys, mode } = destination
  return assemble({ ...engine.settings, webhooks, sharedSecrets, standardKeys, mode }, engine.shared)
}

function assemble(settings: ResolvedWebhookSettings, shared: SharedParts): EngineParts {
  const { platform, transport } = shared
  const stamp = signerFor(platform, 'sha256-base64', settings.standardKeys, (base64) => `v1,${base64}`, ' ')
  const sendUnbounded = createUnboundedSender(settings, transport, stamp)
  return {
    settings,
    endpoints: createEndpoints(settings, shared.limiterFor),
    transport,
    send: createSender(shared.overall, sendUnbounded),
    sendUnbounded,
    sign: signerFor(platform, 'sha1-hex', settings.sharedSecrets, (hex) => hex, ','),
    stamp,
    shared,
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
