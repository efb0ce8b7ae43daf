import { OptionsError } from '../../index.js'
import type { Source } from '../../webhook/bullmq/index.js'
import { WebhookDestination, type Destination } from '../../webhook/index.js'
import { isObject } from '../ingest/batch.js'

// The file `eventwire serve --config` reads: sources (whose write keys the ingest API takes, each
// with the destinations its events go to) and destinations, to write into the registry at start
// and on SIGHUP. Checked whole before anything is written: an error names the field and what to
// give. Each source and destination is checked by the library's own rules (`check`).

/** A source of the config file, as `sources.set()` takes it. */
export type SourceConfig = Source

/** What `--config` holds, checked. */
export interface ServeConfig {
  /** Sources written into the registry at start (each replaces the one of its id). */
  readonly sources: readonly SourceConfig[]
  /** Destinations written into the registry at start, before the sources. */
  readonly destinations: readonly Destination[]
}

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

/**
 * An error of the library's checks (`destination.webhooks[0].url`), its field named where it is
 * in the file (`destinations[2].webhooks[0].url`).
 */
function atField(error: unknown, from: string, to: string): unknown {
  const option = (error as { option?: unknown }).option
  if ((error as { code?: unknown }).code !== 'ERR_INVALID_OPTION' || typeof option !== 'string') return error
  const message = (error as Error).message
  const reason = message
    .slice(message.indexOf('`: ') + 3)
    .replace('no such option; the options are', 'no such field; the fields are')
    .replace('no such option;', 'no such field;')
  return new OptionsError(`${to}${option.slice(from.length)}`, reason)
}

/** The write keys a checked source gives in plain text: one, a list, or none (only digests). */
export function plainKeys(source: SourceConfig): readonly string[] {
  return source.writeKey === undefined ? [] : [source.writeKey].flat()
}

/**
 * Checks a parsed `--config` file; `checkSource` is the registry's own check of a source
 * (`WebhookSources.check`).
 *
 * @throws {@link OptionsError} naming the first field it cannot use (`sources[1].writeKey`) and what to give.
 */
export function checkServeConfig(value: unknown, checkSource: (source: SourceConfig) => void): ServeConfig {
  if (!isObject(value))
    throw new OptionsError('config', 'expected a JSON object { "sources": [...], "destinations": [...] }.')
  refuseUnknown(value, ['sources', 'destinations'], { source: 'sources', destination: 'destinations' }, 'config.')
  const sources = value['sources'] ?? []
  if (!Array.isArray(sources))
    throw new OptionsError(
      'sources',
      'expected a list of sources, such as [{ "id": "shop", "writeKey": "wk_…", "destinations": ["acme"] }].',
    )
  const checked = sources.map((source: unknown, index) => {
    try {
      checkSource(source as SourceConfig)
    } catch (error) {
      throw atField(error, 'source', `sources[${index}]`)
    }
    return source as SourceConfig
  })
  const ids = new Set<string>()
  const keys = new Set<string>()
  for (const [index, source] of checked.entries()) {
    if (ids.has(source.id))
      throw new OptionsError(`sources[${index}].id`, `another source is ${JSON.stringify(source.id)} too.`)
    ids.add(source.id)
    for (const key of plainKeys(source)) {
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
  if (sources.length === 0 && given.length === 0)
    throw new OptionsError(
      'sources',
      'the file sets nothing: give sources, such as [{ "id": "shop", "writeKey": "wk_…", "destinations": ["acme"] }], or destinations.',
    )
  // Each destination checked by the rules the registry writes it by: set into a registry in memory.
  const checker = new WebhookDestination({})
  let destinations: Destination[]
  try {
    destinations = given.map((destination, index) => {
      try {
        checker.destinations.set(destination as Destination)
      } catch (error) {
        throw atField(error, 'destination', `destinations[${index}]`)
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
