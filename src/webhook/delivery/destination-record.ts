import { OptionsError } from '../../core/errors/options-error.js'
import { checkOptionNames, choiceOption, integerOption } from '../../core/option-checks.js'
import { isObject } from '../../core/validate.js'
import type { ResolvedWebhook } from '../network/endpoint.js'
import { checkWebhookCount, refuseRepeatedUrls, resolveEntry, signingSecrets, type WebhookEntry } from './settings.js'

/**
 * One customer's Webhooks destination, as a platform keeps it: where its events go and how they
 * are signed. Many of them share one queue and one fleet of workers; what applies to every
 * destination (timeouts, retry window, breakers, rates) is the workers' settings.
 */
export interface Destination {
  /** 1 to 100 characters: letters, digits, `_`, `-` and `.`, starting with a letter or digit. */
  id: string
  /** 1 to 5 receiving URLs with their static headers. */
  webhooks: readonly WebhookEntry[]
  /** This destination's `X-Signature` secrets: one, or a rotation (see `WebhookSettings.sharedSecret`). */
  sharedSecret?: string | readonly string[] | undefined
  /** This destination's Standard Webhooks secrets (see `WebhookSettings.standardSecret`). */
  standardSecret?: string | readonly string[] | undefined
  /** `'any'` or `'each'`, as `WebhookSettings.mode`. @defaultValue 'any' */
  mode?: 'any' | 'each' | undefined
  /**
   * A disabled destination takes no new events and sends nothing: what it had queued becomes
   * dead letters with `ERR_DESTINATION_DISABLED`, to re-drive once it is enabled. @defaultValue true
   */
  enabled?: boolean | undefined
}

/** A destination as the registry holds it: its settings, with the registry's version of it and when it was written. */
export interface StoredDestination {
  readonly id: string
  readonly webhooks: readonly WebhookEntry[]
  readonly sharedSecret?: string | readonly string[]
  readonly standardSecret?: string | readonly string[]
  readonly mode: 'any' | 'each'
  readonly enabled: boolean
  /** Grows with every change of the registry: what `set(destination, { ifVersion })` compares. */
  readonly version: number
  /** When it was last written, in epoch ms on Redis's clock. */
  readonly updatedAt: number
}

/** A destination's settings as the registry writes them: as given, with the defaults filled in. */
export type DestinationRecord = Omit<StoredDestination, 'version' | 'updatedAt'>

/** A destination checked: what an engine sends and signs with. */
export interface ResolvedDestination {
  readonly id: string
  readonly enabled: boolean
  readonly webhooks: readonly ResolvedWebhook[]
  readonly sharedSecrets: readonly string[]
  readonly standardKeys: readonly Uint8Array[]
  readonly mode: 'any' | 'each'
}

/** Letters, digits, `_`, `-` and `.`: an id that needs no quoting in a job id, a Redis key, a log or a shell. */
const DESTINATION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/

const DESTINATION_NAMES: Readonly<Record<keyof Destination, true>> = {
  id: true,
  webhooks: true,
  sharedSecret: true,
  standardSecret: true,
  mode: true,
  enabled: true,
}

/** Names people reach for, mapped to ours. */
const LIKELY_NAMES: Readonly<Record<string, string>> = {
  urls: 'webhooks',
  secret: 'sharedSecret',
  disabled: 'enabled',
}

/**
 * The `ifVersion` of a registry's `set()` options, checked: a name it does not know (`ifversion`)
 * is refused rather than ignored, which would drop the protection without a word.
 *
 * @throws {@link OptionsError} naming the option and the fix.
 */
export function ifVersionOf(options: unknown): number | undefined {
  if (options === undefined) return undefined
  if (!isObject(options)) throw new OptionsError('options', 'expected { ifVersion? }.')
  checkOptionNames(options, SET_OPTIONS, { ifversion: 'ifVersion', version: 'ifVersion' })
  return options['ifVersion'] === undefined ? undefined : integerOption('ifVersion', options['ifVersion'], 0, 0)
}

const SET_OPTIONS: Readonly<Record<string, true>> = { ifVersion: true }

/** Orders destinations by id, as `list()` gives them; a registry holds each id once, so none are equal. */
export function byId(a: { readonly id: string }, b: { readonly id: string }): number {
  // Stryker disable next-line EqualityOperator: two ids of one registry are never equal.
  return a.id < b.id ? -1 : 1
}

/** Why `id` cannot name a destination, or `undefined` when it can. */
export function whyNotDestinationId(id: unknown): string | undefined {
  if (typeof id !== 'string') return `expected a string, got ${typeof id}`
  if (!DESTINATION_ID.test(id))
    return `expected 1 to 100 letters, digits, "_", "-" or ".", starting with a letter or digit, got ${JSON.stringify(id.slice(0, 120))}`
  return undefined
}

/**
 * Refuses an id no destination can have.
 *
 * @param option - How the error names it: `destination` (an argument), `destination.id` (a field).
 * @throws {@link OptionsError} naming the option and what an id may be.
 */
export function checkDestinationId(id: unknown, option = 'destination'): asserts id is string {
  const why = whyNotDestinationId(id)
  if (why !== undefined) throw new OptionsError(option, `${why}.`)
}

/**
 * {@link resolveDestination} for a write (`destinations.set()`): it also refuses a URL listed
 * twice. A destination stored before that rule still reads, so its events are not lost.
 */
export function resolveNewDestination(value: unknown): ReturnType<typeof resolveDestination> {
  const resolved = resolveDestination(value)
  refuseRepeatedUrls(resolved.resolved.webhooks, 'destination.webhooks')
  return resolved
}

/** What a value that is not a destination object was, and the shape to give. */
function notADestination(value: unknown): string {
  const given =
    typeof value === 'string'
      ? `a string (${JSON.stringify(value.slice(0, 40))})`
      : value === null
        ? 'null'
        : Array.isArray(value)
          ? 'an array'
          : `a ${typeof value}`
  return `expected an object { id, webhooks, sharedSecret?, ... }, got ${given}. Give it as { id: 'acme', webhooks: [{ url: 'https://…' }] }.`
}

/**
 * Checks a destination and gives what engines use and what the registry stores (its settings as
 * given, secrets included, without the fields left out).
 *
 * @param prefix - How errors name the destination's fields: `destination.` by default.
 * @throws {@link OptionsError} naming the first field it cannot use and how to fix it.
 */
export function resolveDestination(
  value: unknown,
  prefix = 'destination.',
): { resolved: ResolvedDestination; record: DestinationRecord } {
  if (!isObject(value)) throw new OptionsError(prefix.slice(0, -1), notADestination(value))
  checkOptionNames(value, DESTINATION_NAMES, LIKELY_NAMES, prefix)
  const id = value['id']
  checkDestinationId(id, `${prefix}id`)
  const webhooks = value['webhooks']
  checkWebhookCount(webhooks, `${prefix}webhooks`)
  const resolvedWebhooks = webhooks.map((entry, index) => resolveEntry(entry, index, `${prefix}webhooks[${index}]`))
  const { sharedSecrets, standardKeys } = signingSecrets(value, prefix)
  const mode = choiceOption(`${prefix}mode`, value['mode'], ['any', 'each']) ?? 'any'
  const enabled = value['enabled'] ?? true
  if (typeof enabled !== 'boolean') throw new OptionsError(`${prefix}enabled`, 'expected true or false.')
  const record: DestinationRecord = {
    id,
    // As given: the registry shows what was set, and each reader resolves it again.
    webhooks: (webhooks as WebhookEntry[]).map(({ url, headers }) =>
      headers === undefined ? { url } : { url, headers },
    ),
    ...(value['sharedSecret'] === undefined ? {} : { sharedSecret: value['sharedSecret'] as string | string[] }),
    ...(value['standardSecret'] === undefined ? {} : { standardSecret: value['standardSecret'] as string | string[] }),
    mode,
    enabled,
  }
  return {
    resolved: { id, enabled, webhooks: resolvedWebhooks, sharedSecrets, standardKeys, mode },
    record,
  }
}
