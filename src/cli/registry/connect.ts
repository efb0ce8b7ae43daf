import type { WebhookQueue } from '../../webhook/bullmq/index.js'
import { EXIT, type ExitCode } from '../exit-codes.js'
import { withoutCredentials } from '../redact.js'
import { escapeControl } from '../terminal.js'
import { UsageError, usageError } from '../usage.js'

/** The options every command on a queue's Redis takes. */
export const REDIS_OPTIONS = {
  redis: {
    long: 'redis',
    short: 'r',
    value: 'url',
    description: 'the Redis of the queue: redis://[user:password@]host[:port][/db], or rediss:// for TLS',
    env: 'EVENTWIRE_REDIS',
    default: 'redis://127.0.0.1:6379',
  },
  name: { long: 'name', value: 'name', description: 'the queue name', default: 'eventwire-webhooks' },
  prefix: { long: 'prefix', value: 'prefix', description: 'the Redis key prefix', default: 'bull' },
  json: { long: 'json', description: 'print JSON lines instead of text' },
} as const

/** ioredis's options for a `redis://` or `rediss://` URL. */
export function connectionOf(text: string): Record<string, unknown> {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return usageError(
      `option '--redis' is not a URL: ${withoutCredentials(JSON.stringify(text))}. Expected redis://host:port.`,
    )
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    usageError(`option '--redis' must start with redis:// or rediss://, got ${url.protocol}//`)
  const db = url.pathname.replace(/^\//, '')
  if (db !== '' && !/^\d+$/.test(db))
    usageError(`option '--redis' names database ${JSON.stringify(db)}: expected a number`)
  return {
    host: url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: url.port === '' ? 6379 : Number(url.port),
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(db === '' ? {} : { db: Number(db) }),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    // A tool fails fast: one try per command, a few seconds to connect.
    maxRetriesPerRequest: 1,
    connectTimeout: 3_000,
    retryStrategy: () => null,
  }
}

/**
 * One of the package's own entries, loaded by its name (`eventwire/webhook/bullmq`), so that the
 * commands that do not need it start without its optional peers; without them, a
 * {@link CommandFailure} that says `needs`: what to install.
 */
export async function loadEntry<Entry>(entry: string, needs: string): Promise<Entry> {
  try {
    // A name, not a path: the bundler leaves it to Node, which finds the package's own entry.
    return (await import(entry)) as Entry
  } catch (error) {
    throw new CommandFailure(`${needs} (${(error as Error).message})`)
  }
}

/** The BullMQ entry, or a failure that says to install the optional peers `bullmq` and `ioredis`. */
export function loadBullmq(): Promise<typeof import('../../webhook/bullmq/index.js')> {
  return loadEntry(
    'eventwire/webhook/bullmq',
    'this command needs the optional packages bullmq and ioredis beside eventwire: npm install bullmq ioredis',
  )
}

/** The queue of the command's options, as an operator's tool opens it. */
async function openQueue(
  connection: Record<string, unknown>,
  options: { name: string; prefix: string },
): Promise<WebhookQueue> {
  const bullmq = await loadBullmq()
  const queue = new bullmq.WebhookQueue({
    connection,
    name: options.name,
    prefix: options.prefix,
    // An operator's tool reads and writes what is there; the producers and workers check Redis's persistence.
    durability: 'best-effort',
    enqueueTimeout: 5_000,
  })
  queue.on('warning', () => undefined)
  queue.on('error', () => undefined)
  return queue
}

/** The command ran and failed: printed on stderr, exit 1. */
export class CommandFailure extends Error {}

/**
 * Runs `work` on the queue of `options` and closes it; a failure of Redis or of the work is
 * printed on stderr (without credentials) and exits 1, a refused input exits 2.
 */
export async function onQueue(
  options: { redis: string; name: string; prefix: string },
  work: (queue: WebhookQueue) => Promise<ExitCode>,
): Promise<ExitCode> {
  // A URL that is not Redis's is a wrong command line: exit 2, before anything is tried.
  const connection = connectionOf(options.redis)
  let queue: WebhookQueue | undefined
  try {
    queue = await openQueue(connection, options)
    return await work(queue)
  } catch (error) {
    // A command line found wrong once the registry was read (a new source without its key): exit 2.
    if (!(error instanceof Error) || error instanceof UsageError) throw error
    const code = (error as { code?: unknown }).code
    // eventwire's own errors name their cause; anything else came from Redis or its connection.
    const message =
      typeof code === 'string' && code.startsWith('ERR_')
        ? error.message
        : error instanceof CommandFailure
          ? error.message
          : `Redis at ${options.redis} failed: ${error.message}. Check --redis (or EVENTWIRE_REDIS) and that Redis is up.`
    process.stderr.write(`error: ${escapeControl(withoutCredentials(message))}\n`)
    return code === 'ERR_INVALID_OPTION' || code === 'ERR_DESTINATION_CONFLICT' || code === 'ERR_SOURCE_CONFLICT'
      ? EXIT.usage
      : EXIT.failed
  } finally {
    await queue?.close().catch(() => undefined)
  }
}

/** Says that the registry holds no destination (or source) `id`: exit code 1. */
export function absent(id: string, kind: 'destination' | 'source' = 'destination'): ExitCode {
  process.stderr.write(`error: no ${kind} ${escapeControl(JSON.stringify(id))} in the registry\n`)
  return EXIT.failed
}
