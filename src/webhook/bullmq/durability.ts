import { OptionsError } from '../../core/errors/options-error.js'
import { choiceOption } from '../../core/option-checks.js'

/**
 * What durable mode demands of Redis:
 *
 * - `strict`: refuse to store or deliver unless Redis keeps every acknowledged write: the
 *   append-only file on, synced `always` or `everysec`, and `maxmemory-policy noeviction`, so that
 *   a full Redis refuses new writes instead of evicting stored events (as far as the server says).
 * - `best-effort`: run on any Redis, and warn once, naming each setting that may lose events.
 */
export type Durability = 'strict' | 'best-effort'

/** How Redis keeps its data, as far as the server would say. */
export interface RedisPersistence {
  /** Whether the append-only file is on; `undefined` when neither CONFIG nor INFO answered. */
  readonly appendonly: boolean | undefined
  /** `appendfsync`; `undefined` where CONFIG is disabled (managed Redis), since INFO does not say. */
  readonly appendfsync: string | undefined
  /** `maxmemory-policy` (CONFIG, else `INFO memory`); `undefined` when neither answered. */
  readonly maxmemoryPolicy: string | undefined
}

/** The two commands the check uses, as ioredis has them. */
export interface RedisInspector {
  config?(subcommand: 'GET', parameter: string): Promise<unknown>
  info(section?: string): Promise<string>
}

async function configValue(redis: RedisInspector, parameter: string): Promise<string | undefined> {
  const reply = await redis.config?.('GET', parameter)
  return Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined
}

/**
 * Whether Redis answered `error` (an ioredis `ReplyError`: a command renamed away, refused by an
 * ACL): then it will not say, and another way is tried. Anything else (a connection lost, a
 * command that ran out of retries) is rethrown: Redis said nothing about its settings, and
 * reading that as "could not be read" would refuse a Redis that is only out of reach.
 */
function rethrowUnlessReply(error: unknown): void {
  if (!(error instanceof Error && error.name === 'ReplyError')) throw error
}

/**
 * Reads Redis's persistence settings: `CONFIG GET appendonly` and `appendfsync`, else (CONFIG
 * disabled or renamed, as on managed services) `aof_enabled` from `INFO persistence`.
 *
 * @throws (as a rejection) what is not Redis's answer: a connection lost during the reads.
 */
export async function readPersistence(redis: RedisInspector): Promise<RedisPersistence> {
  const maxmemoryPolicy = await readEvictionPolicy(redis)
  try {
    const appendonly = await configValue(redis, 'appendonly')
    if (appendonly !== undefined)
      return { appendonly: appendonly === 'yes', appendfsync: await configValue(redis, 'appendfsync'), maxmemoryPolicy }
  } catch (error) {
    // CONFIG is refused (renamed, ACL, managed Redis): INFO still says whether AOF is on.
    rethrowUnlessReply(error)
  }
  try {
    const enabled = /^aof_enabled:(\d)/m.exec(await redis.info('persistence'))?.[1]
    return { appendonly: enabled === undefined ? undefined : enabled === '1', appendfsync: undefined, maxmemoryPolicy }
  } catch (error) {
    rethrowUnlessReply(error)
    return { appendonly: undefined, appendfsync: undefined, maxmemoryPolicy }
  }
}

/** `maxmemory-policy`: CONFIG GET, else `maxmemory_policy` from INFO memory; `undefined` when both are refused. */
async function readEvictionPolicy(redis: RedisInspector): Promise<string | undefined> {
  try {
    const policy = await configValue(redis, 'maxmemory-policy')
    if (policy !== undefined) return policy
  } catch (error) {
    // CONFIG refused: INFO memory says it too.
    rethrowUnlessReply(error)
  }
  try {
    return /^maxmemory_policy:(\S+)/m.exec(await redis.info('memory'))?.[1]
  } catch (error) {
    rethrowUnlessReply(error)
    return undefined
  }
}

/** A way `persistence` may lose acknowledged events, with the setting that closes it. */
interface Weakness {
  /** The setting at fault: a best-effort warning names each once. */
  readonly setting: 'appendonly' | 'appendfsync' | 'maxmemory-policy'
  readonly why: string
  readonly fix: string
}

const AOF_FIX =
  'turn the append-only file on (redis.conf: appendonly yes, appendfsync everysec or always; or CONFIG SET)'

/** Every way `persistence` may lose acknowledged events; none when it keeps them. */
function weaknesses(persistence: RedisPersistence): Weakness[] {
  const found: Weakness[] = []
  if (persistence.appendonly === undefined) {
    found.push({
      setting: 'appendonly',
      why: 'its persistence settings could not be read (CONFIG and INFO persistence both refused), so a restart may lose acknowledged events',
      fix: AOF_FIX,
    })
  } else if (!persistence.appendonly) {
    found.push({
      setting: 'appendonly',
      why: 'it has appendonly no: a Redis restart loses every event acknowledged since the last RDB snapshot (all of them without one)',
      fix: AOF_FIX,
    })
  } else if (persistence.appendfsync === 'no') {
    found.push({
      setting: 'appendfsync',
      why: 'it has appendfsync no: a machine crash loses the writes the OS had not flushed yet (up to ~30 s)',
      fix: AOF_FIX,
    })
  }
  const policy = persistence.maxmemoryPolicy
  if (policy === undefined) {
    found.push({
      setting: 'maxmemory-policy',
      why: 'its maxmemory-policy could not be read (CONFIG and INFO memory both refused), so a full Redis may evict acknowledged events',
      fix: 'make sure maxmemory-policy is noeviction',
    })
  } else if (policy !== 'noeviction') {
    found.push({
      setting: 'maxmemory-policy',
      why: `it has maxmemory-policy ${policy}: once it reaches maxmemory it evicts keys, acknowledged events included, without an error`,
      fix: 'set maxmemory-policy noeviction (redis.conf or CONFIG SET), as BullMQ requires; a full Redis then refuses new events instead',
    })
  }
  return found
}

/** What {@link judgeDurability} found. */
export interface DurabilityVerdict {
  /** Under `strict`, when Redis may lose acknowledged events. */
  readonly refusal?: OptionsError
  /** Under `best-effort`, naming each setting at fault that is not in `warned` yet. */
  readonly warning?: string
  /** The settings this warning names. */
  readonly warned: readonly string[]
}

/**
 * Checks `persistence` against `durability`: the refusal to throw under `strict`, the warning to
 * give under `best-effort`, or neither when Redis keeps what it acknowledges. A setting in
 * `warned` (named by an earlier warning) is not named again.
 */
export function judgeDurability(
  persistence: RedisPersistence,
  durability: Durability,
  who: string,
  warned: ReadonlySet<string> = new Set(),
): DurabilityVerdict {
  const all = weaknesses(persistence)
  const found = durability === 'strict' ? all : all.filter((weakness) => !warned.has(weakness.setting))
  if (found.length === 0) return { warned: [] }
  const why = found.map((weakness) => weakness.why).join('; and ')
  const fix = found.map((weakness) => weakness.fix).join(', and ')
  if (durability === 'strict') {
    return {
      refusal: new OptionsError(
        'durability',
        `'strict' (the default) refuses this Redis for ${who}: ${why}. To keep every acknowledged event, ${fix}; to accept the loss, pass durability: 'best-effort'.`,
      ),
      warned: [],
    }
  }
  return {
    warning: `eventwire: ${who} runs with durability 'best-effort' on a Redis where ${why}. To keep every acknowledged event, ${fix}.`,
    warned: found.map((weakness) => weakness.setting),
  }
}

/** `durability` checked as an option. */
export function durabilityOption(value: unknown): Durability {
  return choiceOption('durability', value, ['strict', 'best-effort']) ?? 'strict'
}
