import { OptionsError } from '../../core/errors/options-error.js'
import { choiceOption } from '../../core/option-checks.js'

/**
 * What durable mode demands of Redis:
 *
 * - `strict`: refuse to store or deliver unless Redis keeps every acknowledged write across a
 *   restart: the append-only file on, synced `always` or `everysec` (as far as the server says).
 * - `best-effort`: run on any Redis, and warn once when a restart would lose events.
 */
export type Durability = 'strict' | 'best-effort'

/** How Redis keeps its data, as far as the server would say. */
export interface RedisPersistence {
  /** Whether the append-only file is on; `undefined` when neither CONFIG nor INFO answered. */
  readonly appendonly: boolean | undefined
  /** `appendfsync`; `undefined` where CONFIG is disabled (managed Redis), since INFO does not say. */
  readonly appendfsync: string | undefined
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
 * Reads Redis's persistence settings: `CONFIG GET appendonly` and `appendfsync`, else (CONFIG
 * disabled or renamed, as on managed services) `aof_enabled` from `INFO persistence`.
 */
export async function readPersistence(redis: RedisInspector): Promise<RedisPersistence> {
  try {
    const appendonly = await configValue(redis, 'appendonly')
    if (appendonly !== undefined)
      return { appendonly: appendonly === 'yes', appendfsync: await configValue(redis, 'appendfsync') }
  } catch {
    // CONFIG is refused (renamed, ACL, managed Redis): INFO still says whether AOF is on.
  }
  try {
    const enabled = /^aof_enabled:(\d)/m.exec(await redis.info('persistence'))?.[1]
    return { appendonly: enabled === undefined ? undefined : enabled === '1', appendfsync: undefined }
  } catch {
    return { appendonly: undefined, appendfsync: undefined }
  }
}

/** Why `persistence` may lose acknowledged events, or `undefined` when it keeps them. */
function weakness(persistence: RedisPersistence): string | undefined {
  if (persistence.appendonly === undefined) {
    return 'its persistence settings could not be read (CONFIG and INFO persistence both refused), so a restart may lose acknowledged events'
  }
  if (!persistence.appendonly)
    return 'it has appendonly no: a Redis restart loses every event acknowledged since the last RDB snapshot (all of them without one)'
  if (persistence.appendfsync === 'no')
    return 'it has appendfsync no: a machine crash loses the writes the OS had not flushed yet (up to ~30 s)'
  return undefined
}

/**
 * Checks `persistence` against `durability`: the refusal to throw under `strict`, the warning to
 * give under `best-effort`, or neither when Redis keeps what it acknowledges.
 */
export function judgeDurability(
  persistence: RedisPersistence,
  durability: Durability,
  who: string,
): { refusal?: OptionsError; warning?: string } {
  const why = weakness(persistence)
  if (why === undefined) return {}
  const fix = 'turn the append-only file on (redis.conf: appendonly yes, appendfsync everysec or always; or CONFIG SET)'
  if (durability === 'strict') {
    return {
      refusal: new OptionsError(
        'durability',
        `'strict' (the default) refuses this Redis for ${who}: ${why}. To keep every acknowledged event, ${fix}; to accept the loss, pass durability: 'best-effort'.`,
      ),
    }
  }
  return {
    warning: `eventwire: ${who} runs with durability 'best-effort' on a Redis where ${why}. To keep every acknowledged event, ${fix}.`,
  }
}

/** `durability` checked as an option. */
export function durabilityOption(value: unknown): Durability {
  return choiceOption('durability', value, ['strict', 'best-effort']) ?? 'strict'
}

/**
 * Reads the persistence of the Redis behind `redis` and applies `durability`: rejects with the
 * refusal (`OptionsError` on `durability`), hands a warning to `warn`.
 */
export async function checkDurability(
  redis: RedisInspector,
  durability: Durability,
  who: string,
  warn: (message: string) => void,
): Promise<void> {
  const { refusal, warning } = judgeDurability(await readPersistence(redis), durability, who)
  if (refusal) throw refusal
  if (warning !== undefined) warn(warning)
}
