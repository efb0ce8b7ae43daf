import { OptionsError } from '../../core/errors/options-error.js'
import type { IdentifyMessage } from '../../core/messages.js'

/** Turns an audience name into its trait name: `'Big Spenders'` -> `'big_spenders'`. */
export function toSnakeCase(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase()
}

/**
 * Turns successive snapshots of an audience's members into identify calls: the
 * first sync yields one call per member with the trait `snake_case(name): true`; later syncs
 * yield only the users added (`true`) or removed (`false`) since the previous sync.
 *
 * @example
 * ```ts
 * import { AudienceSync } from 'eventwire/webhook'
 *
 * const audience = new AudienceSync('Big Spenders')
 * audience.sync(['u1', 'u2']) // u1 true, u2 true
 * audience.sync(['u2', 'u3']) // u1 false, u3 true
 * ```
 */
export class AudienceSync {
  /** The trait the calls set, e.g. `big_spenders`. */
  readonly trait: string
  #members = new Set<string>()

  constructor(name: string) {
    if (typeof name !== 'string' || toSnakeCase(name) === '') {
      throw new OptionsError('name', 'an audience name needs at least one letter or digit.')
    }
    this.trait = toSnakeCase(name)
  }

  /** The identify calls that bring a receiver from the previous snapshot to this one. */
  sync(members: Iterable<string>): Array<IdentifyMessage & { type: 'identify'; userId: string }> {
    const next = new Set(members)
    const calls: Array<IdentifyMessage & { type: 'identify'; userId: string }> = []
    for (const userId of next) {
      if (!this.#members.has(userId)) calls.push({ type: 'identify', userId, traits: { [this.trait]: true } })
    }
    for (const userId of this.#members) {
      if (!next.has(userId)) calls.push({ type: 'identify', userId, traits: { [this.trait]: false } })
    }
    this.#members = next
    return calls
  }
}
