import { readFileSync } from 'node:fs'
import type { WebhookQueue } from '../../webhook/bullmq/index.js'
import { fromOptions, usageError } from '../usage.js'
import { checkServeConfig, type ServeConfig, type SourceConfig } from './serve-config.js'

// The config file of `eventwire serve`: read and checked at start (a usage error, exit 2, names
// the field), and read again on SIGHUP, when a file it cannot use leaves the registry as it was.
// It seeds the registry: what it names is written there, and what it does not name stays.

/**
 * The config file at `path`, read and checked by `checkSource` (`WebhookSources.check`); a usage
 * error (exit 2) naming the field otherwise.
 */
export function readConfig(path: string, checkSource: (source: SourceConfig) => void): ServeConfig {
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
  return fromOptions(() => checkServeConfig(parsed, checkSource))
}

/**
 * Checks that each source's destinations are in the file or the registry, then writes the file's
 * destinations into the registry, then its sources: a file that names a missing destination
 * writes nothing.
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
  for (const [index, source] of config.sources.entries()) {
    try {
      await queue.sources.set(source)
    } catch (error) {
      // A write key another source of the registry holds: said where it is in the file.
      if ((error as { code?: unknown }).code === 'ERR_INVALID_OPTION')
        usageError(`sources[${index}]: ${(error as Error).message}`)
      throw error
    }
  }
}
