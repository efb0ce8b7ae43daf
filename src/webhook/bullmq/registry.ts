import { REDIS_NOW } from './redis-now.js'
import { evalCached, type ScriptStore } from './cached-script.js'

// A registry (of destinations, or of sources), in Redis, beside the queue's keys (and in its hash
// slot, with a hash-tagged prefix): one hash of the records' JSON by id, a counter that every
// change increments, and a sorted set of ids scored by the change that last wrote them. A reader
// that has seen changes up to N asks for the ids scored above N: that is all it must read again. A
// deleted id stays in the set (a few dozen bytes) so that readers learn it is gone. A registry may
// also keep one field's values unique across its records (a source's write keys): a hash from
// each value to the id that holds it, kept by the same script that writes.

/**
 * A key of one destination's own under the queue's keys (`<keys>:<kind>:<id>`), or of the workers'
 * own `webhooks` (`<keys>:<kind>`): a destination id has no `:`, so neither can be the other's.
 */
export function destinationKey(
  keys: string,
  kind: 'attempts' | 'alerts' | 'sent',
  destination: string | undefined,
): string {
  return destination === undefined ? `${keys}:${kind}` : `${keys}:${kind}:${destination}`
}

/** What the registry is read and written with: ioredis's scripts, as BullMQ's connection runs them. */
export interface RegistryStore extends ScriptStore {
  hget(key: string, field: string): Promise<string | null>
  hmget(key: string, ...fields: string[]): Promise<Array<string | null>>
  del(key: string): Promise<number>
  hscan(
    key: string,
    cursor: string,
    match: 'COUNT',
    count: number,
  ): Promise<[cursor: string, fieldsAndValues: string[]]>
}

/**
 * Writes one record, or deletes it (ARGV[2] empty). KEYS: the hash, the changes, the counter, the
 * unique values. ARGV: the id, its JSON without the registry's fields, the version it must have
 * now ('' for any, '0' for none), and the field whose values (a list) no two records share ('' for
 * none). Returns {1, version, Redis's now in ms} once written, {0, 0} for a delete of nothing,
 * {-1, version it has} when the version did not match, {-2, 0, id} when another record holds one
 * of the unique values.
 */
const WRITE = `${REDIS_NOW}
local current = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[3] ~= '' then
  local have = 0
  if current then
    local ok, stored = pcall(cjson.decode, current)
    have = (ok and type(stored) == 'table' and tonumber(stored.version)) or -1
  end
  if have ~= tonumber(ARGV[3]) then return {-1, have} end
end
if ARGV[2] == '' and not current then return {0, 0} end
local field = ARGV[4]
-- Whether the record of holder lists claim: an entry of the index whose record is gone,
-- or no longer lists it (a record overwritten with something unreadable), holds nothing.
local function holds(holder, claim)
  local record = redis.call('HGET', KEYS[1], holder)
  if not record then return false end
  local ok, stored = pcall(cjson.decode, record)
  if not ok or type(stored) ~= 'table' or type(stored[field]) ~= 'table' then return false end
  for _, held in ipairs(stored[field]) do
    if held == claim then return true end
  end
  return false
end
local claims = {}
if field ~= '' and ARGV[2] ~= '' then
  claims = cjson.decode(ARGV[2])[field] or {}
  for _, claim in ipairs(claims) do
    local holder = redis.call('HGET', KEYS[4], claim)
    if holder and holder ~= ARGV[1] and holds(holder, claim) then return {-2, 0, holder} end
  end
end
if field ~= '' and current then
  local ok, stored = pcall(cjson.decode, current)
  if ok and type(stored) == 'table' and type(stored[field]) == 'table' then
    for _, claim in ipairs(stored[field]) do
      if redis.call('HGET', KEYS[4], claim) == ARGV[1] then redis.call('HDEL', KEYS[4], claim) end
    end
  end
end
for _, claim in ipairs(claims) do redis.call('HSET', KEYS[4], claim, ARGV[1]) end
local version = redis.call('INCR', KEYS[3])
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], string.sub(ARGV[2], 1, -2) .. ',"version":' .. version .. ',"updatedAt":' .. now .. '}')
end
redis.call('ZADD', KEYS[2], version, ARGV[1])
return {1, version, now}
`

/**
 * The changes after ARGV[1]. KEYS: the changes, the counter. Returns the counter, then each id
 * changed since, with its version. A counter below ARGV[1] means the registry was emptied or
 * restored from an older copy: the reader forgets all it holds.
 */
const CHANGES = `
local version = tonumber(redis.call('GET', KEYS[2]) or '0')
local changed = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
table.insert(changed, 1, version)
return changed
`

/**
 * Whether ARGV[1] was in the registry and was deleted since: not in the hash, and in the changes
 * (where a deleted id stays). KEYS: the hash, the changes. Returns 1 or 0.
 */
const DELETED = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 1 end
return 0
`

/** Most changed ids one read returns; a reader that is further behind forgets all it holds. */
export const MAX_CHANGES_READ = 10_000

/** The outcome of a write: written at `version`, nothing to delete, another version found, or a unique value another record holds. */
export type WriteOutcome =
  | { readonly kind: 'written'; readonly version: number; readonly at: number }
  | { readonly kind: 'absent' }
  | { readonly kind: 'conflict'; readonly version: number }
  | { readonly kind: 'taken'; readonly by: string }

/** The changes since a version: the counter now and the ids changed, or `forgetAll` when a reader cannot catch up id by id. */
export interface Changes {
  readonly version: number
  readonly ids: readonly string[]
  readonly forgetAll: boolean
}

/** The registry's keys under a queue (`<prefix>:<name>`) and the commands on them. */
export class Registry {
  readonly #hash: string
  readonly #changes: string
  readonly #counter: string
  readonly #unique: string

  /**
   * @param kind - What it holds: `destinations` or `sources`, the last part of its keys' names.
   * @param uniqueField - A field of each record that holds a list of values no two records may
   *   share (a source's `writeKeyDigests`).
   */
  constructor(
    queueKeys: string,
    kind: 'destinations' | 'sources' = 'destinations',
    readonly uniqueField = '',
  ) {
    this.#hash = `${queueKeys}:${kind}`
    this.#changes = `${queueKeys}:${kind}:changes`
    this.#counter = `${queueKeys}:${kind}:version`
    this.#unique = `${queueKeys}:${kind}:unique`
  }

  /**
   * Writes `json` (a record's settings, an object's JSON) under `id`, or deletes `id` when
   * `json` is `undefined`; with `ifVersion`, only if the stored version is that one (0: none stored).
   */
  async write(store: RegistryStore, id: string, json: string | undefined, ifVersion?: number): Promise<WriteOutcome> {
    const [done, version, at] = (await evalCached(
      store,
      WRITE,
      4,
      this.#hash,
      this.#changes,
      this.#counter,
      this.#unique,
      id,
      json ?? '',
      ifVersion === undefined ? '' : ifVersion,
      this.uniqueField,
    )) as [number, number, (number | string)?]
    if (done === 1) return { kind: 'written', version, at: at as number }
    if (done === 0) return { kind: 'absent' }
    if (done === -2) return { kind: 'taken', by: String(at) }
    return { kind: 'conflict', version }
  }

  /** The stored JSON of each of `ids`, in their order (`null` for one not stored). */
  readMany(store: RegistryStore, ids: readonly string[]): Promise<Array<string | null>> {
    return ids.length === 0 ? Promise.resolve([]) : store.hmget(this.#hash, ...ids)
  }

  /** The stored JSON of `id`, or `null`. */
  read(store: RegistryStore, id: string): Promise<string | null> {
    return store.hget(this.#hash, id)
  }

  /** Whether `id` was stored once and is deleted now (not set again since). */
  async wasDeleted(store: RegistryStore, id: string): Promise<boolean> {
    return (await evalCached(store, DELETED, 2, this.#hash, this.#changes, id)) === 1
  }

  /** Every stored record's id and JSON, a page of Redis's scan at a time. */
  async readAll(store: RegistryStore): Promise<Array<[id: string, json: string]>> {
    const all: Array<[string, string]> = []
    let cursor = '0'
    do {
      const [next, flat] = await store.hscan(this.#hash, cursor, 'COUNT', 1_000)
      for (let i = 0; i + 1 < flat.length; i += 2) all.push([flat[i] as string, flat[i + 1] as string])
      cursor = next
    } while (cursor !== '0')
    return all
  }

  /** What changed after `seen`. */
  async changesSince(store: RegistryStore, seen: number): Promise<Changes> {
    const reply = (await evalCached(store, CHANGES, 2, this.#changes, this.#counter, seen, MAX_CHANGES_READ)) as Array<
      number | string
    >
    const version = Number(reply[0])
    const ids: string[] = []
    for (let i = 1; i < reply.length; i += 2) ids.push(String(reply[i]))
    // Behind by more than one read, or the counter went back: what is held cannot be patched.
    const forgetAll = version < seen || ids.length >= MAX_CHANGES_READ
    return { version, ids, forgetAll }
  }
}
