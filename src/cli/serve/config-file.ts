import { readFileSync } from 'node:fs'
import type { WebhookQueue } from '../../webhook/bullmq/index.js'
import type { WriteKeys } from '../ingest/ingest-request.js'
import { fromOptions, usageError } from '../usage.js'
import { checkServeConfig, type ServeConfig, type SourceConfig } from './serve-config.js'
import { SourceKeys } from './source-keys.js'

// The config file of `eventwire serve`: read and checked at start (a usage error, exit 2, names
// the field), and read again on SIGHUP, when a file it cannot use leaves the one in use as it was.

/** The config file at `path`, read and checked; a usage error (exit 2) naming the field otherwise. */
export function readConfig(path: string | undefined): ServeConfig {
  if (path === undefined)
    usageError('serve needs --config <file>: the sources whose write keys it takes (docs/serve.md)')
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    return usageError(`cannot read --config ${path}: ${(error as Error).message}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return usageError(`--config ${path} is not JSON: ${(error as Error).message}`)
  }
  return fromOptions(() => checkServeConfig(parsed))
}

/**
 * Checks that each source's destinations are in the file or the registry, then writes the file's
 * destinations into the registry: a file that names a missing one writes nothing.
 */
export async function seed(queue: WebhookQueue, config: ServeConfig): Promise<void> {
  const inFile = new Set(config.destinations.map((destination) => destination.id))
  for (const [index, source] of config.sources.entries()) {
    for (const [position, id] of source.destinations.entries()) {
      if (!inFile.has(id) && (await queue.destinations.get(id)) === undefined)
        usageError(
          `sources[${index}].destinations[${position}]: no destination ${JSON.stringify(id)} in the registry. Add it under "destinations" in --config, or with eventwire destinations set.`,
        )
    }
  }
  for (const destination of config.destinations) await queue.destinations.set(destination)
}

/** The sources in use, found by write key: the config's as last read, swapped whole on a reload. */
export class LiveSources implements WriteKeys<SourceConfig> {
  #keys: SourceKeys

  constructor(sources: readonly SourceConfig[]) {
    this.#keys = new SourceKeys(sources)
  }

  get missingHint(): string {
    return this.#keys.missingHint
  }

  get wrongHint(): string {
    return this.#keys.wrongHint
  }

  sourceOf(writeKey: string): SourceConfig | undefined {
    return this.#keys.sourceOf(writeKey)
  }

  /** From now on, these sources: a request already read keeps the source it was read with. */
  replace(sources: readonly SourceConfig[]): void {
    this.#keys = new SourceKeys(sources)
  }
}
