import { readFileSync } from 'node:fs'
import type { WebhookQueue } from '../../webhook/bullmq/index.js'
import { jsonProblem } from '../ingest/batch.js'
import { fromOptions, usageError } from '../usage.js'
import { checkServeConfig, plainKeys, type ServeConfig, type SourceConfig } from './serve-config.js'

// The config file of `eventwire serve`: read and checked at start (a usage error, exit 2, names
// the field), and read again on SIGHUP, when a file it cannot use leaves the registry as it was.
// It seeds the registry: what it has and the registry lacks is added; nothing there is changed
// or deleted, and what was deleted from the registry is not added again. The registry is the one
// truth; the file, a way to fill it.

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
    return usageError(`--config ${path} is not JSON: ${jsonProblem(error)}`)
  }
  return fromOptions(() => checkServeConfig(parsed, checkSource))
}

/**
 * What a seed did: the ids it added, those the registry had already and kept as they were, and
 * those deleted from the registry, which stay deleted.
 */
export interface Seeded {
  readonly added: readonly string[]
  readonly kept: readonly string[]
  readonly deleted: readonly string[]
}

/** Whether the registry holds `id`: one it holds but cannot read counts as held, and is kept. */
async function holds(read: () => Promise<unknown>): Promise<boolean> {
  try {
    return (await read()) !== undefined
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_INVALID_OPTION') return true
    throw error
  }
}

/**
 * Writes into the registry what the file has and the registry lacks: its destinations, then its
 * sources. An id the registry has already is kept as it is there, so a change made with
 * `eventwire sources set` or `destinations set` outlives a restart or a SIGHUP. Everything is
 * checked before anything is written: a source that names a destination neither has, or a new
 * source with a write key another source holds, writes nothing.
 */
export async function seed(queue: WebhookQueue, config: ServeConfig): Promise<Seeded> {
  const kept: string[] = []
  const deleted: string[] = []
  const newDestinations = []
  // The destinations known to be there once the file's are written: read from Redis once each.
  const present = new Set<string>()
  const deletedDestinations = new Set<string>()
  for (const destination of config.destinations) {
    if (await holds(() => queue.destinations.get(destination.id))) kept.push(`destinations.${destination.id}`)
    // Deleted on purpose: the file does not bring it back (a revoked customer, a leaked secret).
    else if (await queue.destinations.wasDeleted(destination.id)) {
      deleted.push(`destinations.${destination.id}`)
      deletedDestinations.add(destination.id)
      continue
    } else newDestinations.push(destination)
    present.add(destination.id)
  }
  const newSources = []
  for (const [index, source] of config.sources.entries()) {
    if (await holds(() => queue.sources.get(source.id))) {
      kept.push(`sources.${source.id}`)
      continue
    }
    if (await queue.sources.wasDeleted(source.id)) {
      deleted.push(`sources.${source.id}`)
      continue
    }
    for (const [position, id] of source.destinations.entries()) {
      if (present.has(id)) continue
      if ((await queue.destinations.get(id)) === undefined)
        usageError(
          `sources[${index}].destinations[${position}]: no destination ${JSON.stringify(id)} in the registry${deletedDestinations.has(id) ? ' (it was deleted, and the file does not add it again)' : ''}. Add it under "destinations" in --config, or with eventwire destinations set.`,
        )
      present.add(id)
    }
    for (const key of plainKeys(source)) {
      const holder = await queue.sources.find(key)
      // The key itself is a secret: the error names where it is, never what it is.
      if (holder !== undefined)
        usageError(
          `sources[${index}].writeKey: source ${JSON.stringify(holder.id)} in the registry has this write key already. Give each source its own, or move the key with eventwire sources set.`,
        )
    }
    newSources.push(source)
  }
  const added: string[] = []
  for (const destination of newDestinations) {
    // Written meanwhile by another process with the same file: the registry's stands.
    await queue.destinations.set(destination, { ifVersion: 0 }).then(
      () => added.push(`destinations.${destination.id}`),
      (error: unknown) => keptIfTaken(error, `destinations.${destination.id}`, kept),
    )
  }
  for (const source of newSources)
    await queue.sources.set(source, { ifVersion: 0 }).then(
      () => added.push(`sources.${source.id}`),
      (error: unknown) => keptIfTaken(error, `sources.${source.id}`, kept),
    )
  return { added, kept, deleted }
}

/** A write that found the id taken meanwhile keeps what is there; any other error stands. */
function keptIfTaken(error: unknown, name: string, kept: string[]): void {
  const code = (error as { code?: unknown }).code
  if (code !== 'ERR_DESTINATION_CONFLICT' && code !== 'ERR_SOURCE_CONFLICT') throw error
  kept.push(name)
}
