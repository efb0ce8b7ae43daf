import { createHash } from 'node:crypto'
import { OptionsError } from '../../core/errors/options-error.js'
import { checkOptionNames } from '../../core/option-checks.js'
import { isObject } from '../../core/validate.js'
import { checkDestinationId, whyNotDestinationId } from '../delivery/destination-record.js'
import { readRecord } from './stored-record.js'

/**
 * A source of the platform: the write keys its clients send with each call, and the registry's
 * destinations its events go to. `eventwire serve` takes a call when its write key is a source's.
 */
export interface Source {
  /** 1 to 100 characters: letters, digits, `_`, `-` and `.`, starting with a letter or digit. What logs name it by. */
  id: string
  /**
   * The write keys its clients send: one, or several while clients move from an old key to a new
   * one. The registry keeps only their SHA-256 digests, never the keys.
   */
  writeKey?: string | readonly string[] | undefined
  /**
   * Keys already stored, by digest (a stored source's `writeKeyDigests`): to change other fields
   * without giving the keys again. With `writeKey`, the source has both.
   */
  writeKeyDigests?: readonly string[] | undefined
  /** The ids of the registry's destinations its events go to, up to 100; `[]` takes calls and sends them nowhere. */
  destinations: readonly string[]
  /** Requests a second it may send to one ingest process; 0 for no limit. The process's own limit when absent. */
  rateLimit?: number | undefined
}

/** A source as the registry holds it: digests of its keys, its destinations, the registry's version and when it was written. */
export interface StoredSource {
  readonly id: string
  /** The SHA-256 digests of its write keys, as `sha256:<hex>`. */
  readonly writeKeyDigests: readonly string[]
  readonly destinations: readonly string[]
  readonly rateLimit?: number
  /** Grows with every change of the registry: what `set(source, { ifVersion })` compares. */
  readonly version: number
  /** When it was last written, in epoch ms on Redis's clock. */
  readonly updatedAt: number
}

/** A source's settings as the registry writes them. */
export type SourceRecord = Omit<StoredSource, 'version' | 'updatedAt'>

/** Most write keys of one source: a rotation needs two; a few more leave room for a slow one. */
export const MAX_WRITE_KEYS = 5

/** The longest write key taken, in characters. */
export const MAX_WRITE_KEY_LENGTH = 200

/** Most destinations one source sends to. */
export const MAX_SOURCE_DESTINATIONS = 100

/** The highest `rateLimit` a source may have, in requests a second. */
export const MAX_RATE_LIMIT = 1_000_000

const SOURCE_NAMES: Readonly<Record<keyof Source, true>> = {
  id: true,
  writeKey: true,
  writeKeyDigests: true,
  destinations: true,
  rateLimit: true,
}

/** Names people reach for, mapped to ours. */
const LIKELY_NAMES: Readonly<Record<string, string>> = {
  writeKeys: 'writeKey',
  key: 'writeKey',
  destination: 'destinations',
  rate: 'rateLimit',
}

const DIGEST = /^sha256:[0-9a-f]{64}$/

/**
 * A write key's digest as the registry keeps it: SHA-256, unkeyed, so that every process finds
 * the source of a key by it. A key is a random token clients are given, so its digest gives
 * nothing away; a short key that can be guessed can be found from its digest by anyone who reads
 * the registry.
 */
export function writeKeyDigest(writeKey: string): string {
  return `sha256:${createHash('sha256').update(writeKey, 'utf8').digest('hex')}`
}

function writeKeysOf(value: unknown, field: string): string[] {
  if (value === undefined) return []
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
    if (/[\s:\p{Cc}\p{Cf}]/u.test(key))
      throw new OptionsError(
        name,
        'a write key may hold no space, no ":" and no control or invisible character: clients send it as an HTTP Basic user name.',
      )
  }
  return keys as string[]
}

function digestsOf(value: unknown, field: string): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw new OptionsError(field, 'expected a list of digests, as a stored source lists them.')
  for (const [index, digest] of value.entries()) {
    // Stryker disable next-line ConditionalExpression: a value that is not a string fails the pattern too; the check narrows the type.
    if (typeof digest !== 'string' || !DIGEST.test(digest))
      throw new OptionsError(
        `${field}[${index}]`,
        'expected "sha256:" and 64 hex digits, as a stored source lists them. Give a new key as writeKey.',
      )
  }
  return value as string[]
}

function destinationsOf(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_SOURCE_DESTINATIONS)
    throw new OptionsError(
      field,
      `expected a list of up to ${MAX_SOURCE_DESTINATIONS} destination ids, such as ["acme"] ([] to take calls and send them nowhere).`,
    )
  for (const [position, destination] of value.entries()) {
    const why = whyNotDestinationId(destination)
    if (why !== undefined) throw new OptionsError(`${field}[${position}]`, `not the id of a destination: ${why}.`)
  }
  if (new Set(value).size !== value.length)
    throw new OptionsError(field, 'names a destination twice: each event would go to it twice.')
  return value as string[]
}

/**
 * Checks a source and gives what the registry stores: its keys as digests.
 *
 * @param prefix - How errors name the source's fields: `source.` by default.
 * @throws {@link OptionsError} naming the first field it cannot use and what to give.
 */
export function resolveSource(value: unknown, prefix = 'source.'): SourceRecord {
  if (!isObject(value))
    throw new OptionsError(
      prefix.slice(0, -1),
      'expected an object { id, writeKey, destinations }, such as { id: "shop", writeKey: "wk_…", destinations: ["acme"] }.',
    )
  checkOptionNames(value, SOURCE_NAMES, LIKELY_NAMES, prefix)
  const id = value['id']
  checkDestinationId(id, `${prefix}id`)
  const keys = writeKeysOf(value['writeKey'], `${prefix}writeKey`)
  const digests = new Set([
    ...digestsOf(value['writeKeyDigests'], `${prefix}writeKeyDigests`),
    ...keys.map(writeKeyDigest),
  ])
  if (digests.size === 0)
    throw new OptionsError(`${prefix}writeKey`, 'a source needs a write key: the key its clients send with each call.')
  if (digests.size > MAX_WRITE_KEYS)
    throw new OptionsError(
      `${prefix}writeKey`,
      `a source has at most ${MAX_WRITE_KEYS} write keys, with writeKeyDigests; drop the old ones.`,
    )
  const destinations = destinationsOf(value['destinations'], `${prefix}destinations`)
  const record: SourceRecord = { id, writeKeyDigests: [...digests], destinations }
  const rateLimit = value['rateLimit']
  if (rateLimit === undefined) return record
  if (!Number.isSafeInteger(rateLimit) || (rateLimit as number) < 0 || (rateLimit as number) > MAX_RATE_LIMIT)
    throw new OptionsError(
      `${prefix}rateLimit`,
      `expected the requests a second this source may send to one process: a whole number from 1 to ${MAX_RATE_LIMIT}, or 0 for no limit.`,
    )
  return { ...record, rateLimit: rateLimit as number }
}

/** A source read from the registry: absent, unreadable (with why), or checked. */
export type ReadSource =
  | { readonly kind: 'absent' }
  | { readonly kind: 'unreadable'; readonly problem: string }
  | { readonly kind: 'found'; readonly stored: StoredSource }

/** Parses and checks what the registry holds for source `id` (see {@link readRecord}). */
export function readStoredSource(id: string, json: string | null): ReadSource {
  const read = readRecord(
    id,
    json,
    (settings) => resolveSource(settings, `sources.${id}.`),
    (record) => record.id,
  )
  if (read.kind !== 'found') return read
  return { kind: 'found', stored: { ...read.checked, version: read.version, updatedAt: read.updatedAt } }
}
