import { OptionsError } from '../../index.js'
import { WebhookDestination, type Destination } from '../../webhook/index.js'
import { isObject } from '../ingest/batch.js'

// The file `eventwire serve --config` reads: the sources whose write keys the ingest API takes,
// each with the destinations its events go to, and destinations to write into the registry at
// start. Checked whole before anything is written: an error names the field and what to give.

/** A source: the write keys its clients send, and the registry's destinations its events go to. */
export interface SourceConfig {
  readonly id: string
  /** One write key, or several while clients move from an old key to a new one. */
  readonly writeKeys: readonly string[]
  readonly destinations: readonly string[]
  /** Requests a second this source may send to one ingest process, 0 for no limit; `--rate-limit` when absent. */
  readonly rateLimit?: number
}

/** What `--config` holds, checked. */
export interface ServeConfig {
  readonly sources: readonly SourceConfig[]
  /** Destinations written into the registry at start (each replaces the one of its id). */
  readonly destinations: readonly Destination[]
}

/** Most write keys of one source: a rotation needs two; a few more leave room for a slow one. */
export const MAX_WRITE_KEYS = 5

/** The longest write key taken, in characters. */
export const MAX_WRITE_KEY_LENGTH = 200

/** Most destinations one source sends to. */
export const MAX_SOURCE_DESTINATIONS = 100

/** The highest `rateLimit` a source may have, in requests a second. */
export const MAX_RATE_LIMIT = 1_000_000

/** A source's id: what logs name it by. */
const SOURCE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/

/** Refuses a field the file may not have, naming the one meant when it is a likely slip. */
function refuseUnknown(
  value: Record<string, unknown>,
  known: readonly string[],
  likely: Readonly<Record<string, string>>,
  at: string,
): void {
  for (const name of Object.keys(value)) {
    if (known.includes(name)) continue
    const meant = likely[name]
    throw new OptionsError(
      `${at}${name}`,
      meant === undefined
        ? `no such field; the fields are ${known.join(', ')}.`
        : `no such field; use \`${meant}\` instead.`,
    )
  }
}

/** A destination's error, its field named where it is in the file: `destinations[2].webhooks[0].url`. */
function atDestination(error: unknown, index: number): unknown {
  const option = (error as { option?: unknown }).option
  if ((error as { code?: unknown }).code !== 'ERR_INVALID_OPTION' || typeof option !== 'string') return error
  const message = (error as Error).message
  const reason = message.slice(message.indexOf('`: ') + 3)
  return new OptionsError(`destinations[${index}]${option.replace(/^destination/, '')}`, reason)
}

function writeKeysOf(value: unknown, field: string): string[] {
  const keys = Array.isArray(value) ? value : [value]
  if (keys.length === 0 || keys.length > MAX_WRITE_KEYS)
    throw new OptionsError(field, `expected one write key, or a list of 1 to ${MAX_WRITE_KEYS} during a rotation.`)
  for (const [index, key] of keys.entries()) {
    const name = Array.isArray(value) ? `${field}[${index}]` : field
    if (typeof key !== 'string' || key.trim() === '' || key.length > MAX_WRITE_KEY_LENGTH)
      throw new OptionsError(
        name,
        `expected a write key: a string of 1 to ${MAX_WRITE_KEY_LENGTH} characters, such as "wk_live_6f1c…" (any string clients are given).`,
      )
    if (/[\s:]/.test(key))
      throw new OptionsError(
        name,
        'a write key may hold no space and no ":": clients send it as an HTTP Basic user name.',
      )
  }
  return keys as string[]
}

function sourceOf(value: unknown, index: number): SourceConfig {
  const at = `sources[${index}]`
  if (!isObject(value)) throw new OptionsError(at, 'expected { id, writeKey, destinations }.')
  refuseUnknown(
    value,
    ['id', 'writeKey', 'destinations', 'rateLimit'],
    { writeKeys: 'writeKey', key: 'writeKey', destination: 'destinations', rate: 'rateLimit' },
    `${at}.`,
  )
  const id = value['id']
  if (typeof id !== 'string' || !SOURCE_ID.test(id))
    throw new OptionsError(
      `${at}.id`,
      'expected 1 to 100 letters, digits, "_", "-" or ".", starting with a letter or digit: what logs name the source by.',
    )
  const destinations = value['destinations']
  if (!Array.isArray(destinations) || destinations.length > MAX_SOURCE_DESTINATIONS)
    throw new OptionsError(
      `${at}.destinations`,
      `expected a list of up to ${MAX_SOURCE_DESTINATIONS} destination ids, such as ["acme"] ([] to take calls and send them nowhere).`,
    )
  for (const [position, destination] of destinations.entries())
    if (typeof destination !== 'string' || destination === '')
      throw new OptionsError(`${at}.destinations[${position}]`, 'expected the id of a destination, such as "acme".')
  const unique = new Set(destinations)
  if (unique.size !== destinations.length)
    throw new OptionsError(`${at}.destinations`, 'names a destination twice: each event would go to it twice.')
  const source: SourceConfig = { id, writeKeys: writeKeysOf(value['writeKey'], `${at}.writeKey`), destinations }
  const rateLimit = value['rateLimit']
  if (rateLimit === undefined) return source
  if (!Number.isSafeInteger(rateLimit) || (rateLimit as number) < 0 || (rateLimit as number) > MAX_RATE_LIMIT)
    throw new OptionsError(
      `${at}.rateLimit`,
      `expected the requests a second this source may send to one process: a whole number from 1 to ${MAX_RATE_LIMIT}, or 0 for no limit.`,
    )
  return { ...source, rateLimit: rateLimit as number }
}

/**
 * Checks a parsed `--config` file.
 *
 * @throws {@link OptionsError} naming the first field it cannot use (`sources[1].writeKey`) and what to give.
 */
export function checkServeConfig(value: unknown): ServeConfig {
  if (!isObject(value))
    throw new OptionsError('config', 'expected a JSON object { "sources": [...], "destinations": [...] }.')
  refuseUnknown(value, ['sources', 'destinations'], { source: 'sources', destination: 'destinations' }, 'config.')
  const sources = value['sources']
  if (!Array.isArray(sources) || sources.length === 0)
    throw new OptionsError(
      'sources',
      'expected a list of sources, such as [{ "id": "shop", "writeKey": "wk_…", "destinations": ["acme"] }].',
    )
  const checked = sources.map(sourceOf)
  const ids = new Set<string>()
  const keys = new Set<string>()
  for (const [index, source] of checked.entries()) {
    if (ids.has(source.id))
      throw new OptionsError(`sources[${index}].id`, `another source is ${JSON.stringify(source.id)} too.`)
    ids.add(source.id)
    for (const key of source.writeKeys) {
      // The key itself is a secret: the error names where it is, never what it is.
      if (keys.has(key))
        throw new OptionsError(
          `sources[${index}].writeKey`,
          'another source has this write key too: give each source its own.',
        )
      keys.add(key)
    }
  }
  const given = value['destinations'] ?? []
  if (!Array.isArray(given))
    throw new OptionsError('destinations', 'expected a list of destinations, as destinations.set() takes them.')
  // Each destination checked by the rules the registry writes it by: set into a registry in memory.
  const checker = new WebhookDestination({})
  let destinations: Destination[]
  try {
    destinations = given.map((destination, index) => {
      try {
        checker.destinations.set(destination as Destination)
      } catch (error) {
        throw atDestination(error, index)
      }
      return destination as Destination
    })
  } finally {
    void checker.close()
  }
  const seen = new Set<string>()
  for (const [index, destination] of destinations.entries()) {
    if (seen.has(destination.id))
      throw new OptionsError(
        `destinations[${index}].id`,
        `another destination is ${JSON.stringify(destination.id)} too.`,
      )
    seen.add(destination.id)
  }
  return { sources: checked, destinations }
}
