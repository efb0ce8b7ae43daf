import type { Source, StoredSource, WebhookQueue } from '../../webhook/bullmq/index.js'
import { countArgument } from '../arguments.js'
import { defineCommand, type Command } from '../command-line.js'
import { EXIT, type ExitCode } from '../exit-codes.js'
import type { OptionSpecs, OptionValues } from '../options.js'
import { escapeControl } from '../terminal.js'
import { usageError } from '../usage.js'
import { absent, onQueue, REDIS_OPTIONS } from './connect.js'
import { printDeleted, printListed, printRecord } from './listing.js'

const ACTIONS = ['list', 'show', 'set', 'delete'] as const
type Action = (typeof ACTIONS)[number]

/** Collects each use of a repeatable option. */
const repeated = (text: string, previous: string[] | undefined): string[] => [...(previous ?? []), text]

const OPTIONS = {
  ...REDIS_OPTIONS,
  writeKey: {
    long: 'write-key',
    value: 'key',
    description: "set: the source's write keys, replacing those it has; repeatable during a rotation",
    parse: repeated,
  },
  addWriteKey: {
    long: 'add-write-key',
    value: 'key',
    description: 'set: a write key beside those it has: the first step of a rotation',
    parse: repeated,
  },
  destination: {
    long: 'destination',
    short: 'd',
    value: 'id',
    description: "set: a destination its events go to; repeatable; none: the source's stay as they are",
    parse: repeated,
  },
  noDestinations: { long: 'no-destinations', description: 'set: take its calls and send them nowhere' },
  rateLimit: {
    long: 'rate-limit',
    value: 'n',
    description:
      "set: requests a second it may send to one ingest process, 0 for no limit, 'default' for serve's --rate-limit",
    parse: (text: string): number | 'default' => (text === 'default' ? 'default' : countArgument(text)),
  },
  ifVersion: {
    long: 'if-version',
    value: 'n',
    description: 'set: write only over this version (0: only a new source)',
    parse: (text: string) => countArgument(text),
  },
} as const satisfies OptionSpecs

type Options = OptionValues<typeof OPTIONS>

function oneLine(source: StoredSource): string {
  const keys = `${source.writeKeyDigests.length} write key${source.writeKeyDigests.length === 1 ? '' : 's'}`
  const rate = source.rateLimit === undefined ? '' : `  ${source.rateLimit}/s`
  const to = source.destinations.length === 0 ? '(nowhere)' : source.destinations.join(' ')
  return escapeControl(`${source.id}  v${source.version}  ${keys}${rate}  -> ${to}`)
}

/**
 * The source `set` writes: what it had (`before`), with what the command line changes. Write
 * keys are stored as digests only, so keeping a source's keys means keeping their digests.
 */
function sourceOf(options: Options, id: string, before: StoredSource | undefined): Source {
  const writeKey = [...(options.writeKey ?? []), ...(options.addWriteKey ?? [])]
  if (before === undefined && writeKey.length === 0)
    usageError(`${id} is a new source: give its write key with --write-key`)
  const kept = options.writeKey === undefined && before !== undefined ? { writeKeyDigests: before.writeKeyDigests } : {}
  const destinations = options.noDestinations ? [] : (options.destination ?? before?.destinations)
  if (destinations === undefined)
    usageError(`${id} is a new source: give where its events go with --destination (or --no-destinations)`)
  const rateLimit = options.rateLimit === 'default' ? undefined : (options.rateLimit ?? before?.rateLimit)
  return {
    id,
    ...kept,
    ...(writeKey.length === 0 ? {} : { writeKey }),
    destinations,
    ...(rateLimit === undefined ? {} : { rateLimit }),
  }
}

/** The source as stored, or `'unreadable'` for one Redis holds that does not read as a source. */
async function readable(queue: WebhookQueue, id: string): Promise<StoredSource | 'unreadable' | undefined> {
  try {
    return await queue.sources.get(id)
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_INVALID_OPTION' && /cannot be read/.test(String(error)))
      return 'unreadable'
    throw error
  }
}

async function act(queue: WebhookQueue, options: Options, action: Action, id: string | undefined): Promise<ExitCode> {
  const registry = queue.sources
  switch (action) {
    case 'list': {
      const { sources, unreadable } = await registry.list()
      printListed(options.json, sources, unreadable, oneLine)
      return EXIT.ok
    }
    case 'show': {
      const source = await registry.get(id as string)
      if (source === undefined) return absent(id as string, 'source')
      printRecord(options.json, source)
      return EXIT.ok
    }
    case 'set': {
      const before = await readable(queue, id as string)
      // Read, then written over what was read: a change made meanwhile fails instead of being undone.
      // One Redis holds that does not read as a source is written over: set is how it is repaired.
      const ifVersion = options.ifVersion ?? (before === 'unreadable' ? undefined : (before?.version ?? 0))
      printRecord(
        options.json,
        await registry.set(sourceOf(options, id as string, before === 'unreadable' ? undefined : before), {
          ifVersion,
        }),
      )
      return EXIT.ok
    }
    case 'delete': {
      if (!(await registry.delete(id as string))) return absent(id as string, 'source')
      printDeleted(options.json, id as string)
      return EXIT.ok
    }
  }
}

/** `eventwire sources`: the registry of sources of a queue, from the shell. */
export const sourcesCommand: Command = defineCommand({
  name: 'sources',
  summary: "list and change the sources of a queue's registry in Redis: whose write keys eventwire serve takes",
  description:
    'Reads and writes the registry of sources that eventwire serve takes calls for (docs/serve.md): each source has write keys and the destinations its events go to. Changes reach every serve process within a second. Write keys are stored as SHA-256 digests only: list and show print the digests, never a key. set changes only what its options name; a new source needs --write-key and --destination.',
  operand: { name: 'action', description: 'what to do', choices: ACTIONS },
  argument: { name: 'id', description: 'the source', for: ['show', 'set', 'delete'] },
  options: OPTIONS,
  epilog:
    'Exit codes: 0 done, 1 no such source or Redis failed, 2 bad command line or source.\n\nExamples:\n  $ eventwire sources set shop --write-key wk_live_6f1c9a --destination acme\n  $ eventwire sources set shop --add-write-key wk_live_82d0e4   # rotation: both keys work\n  $ eventwire sources set shop --write-key wk_live_82d0e4       # then only the new one\n  $ eventwire sources list\n  $ eventwire sources delete shop',
  run: (options, action, id) => {
    // Checked before Redis is asked: a wrong command line is known at once.
    if (
      action !== 'set' &&
      (options.writeKey ??
        options.addWriteKey ??
        options.destination ??
        options.rateLimit ??
        options.ifVersion ??
        (options.noDestinations || undefined)) !== undefined
    )
      usageError(
        `${action} takes none of --write-key, --add-write-key, --destination, --no-destinations, --rate-limit, --if-version`,
      )
    if (options.noDestinations && options.destination !== undefined)
      usageError('give either --destination or --no-destinations, not both')
    return onQueue(options, (queue) => act(queue, options, action, id))
  },
})
