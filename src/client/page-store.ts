import { MAX_MESSAGE_BYTES } from '../core/limits.js'
import { MESSAGE_TYPES, type MessageType } from '../core/messages.js'
import { utf8ByteLength } from '../core/utf8.js'
import type { MessageRecord } from './batch.js'

/** The part of the Web Storage API the store uses: `localStorage` in browsers, a stand-in in tests. */
export interface StorageArea {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/**
 * Most UTF-16 code units the store writes under one key: a fifth of the 5 MB browsers give an
 * origin, so that the page's own use of `localStorage` keeps its room.
 */
export const MAX_STORED_CHARS = 1_000_000

/**
 * Messages a page could not send as it went away, kept in Web Storage for the next `Client` of the
 * same endpoint and write key on this origin (the next page of the site, or this one coming back
 * from the back-forward cache).
 */
export interface UnsentStore {
  /**
   * Adds messages to those already kept, oldest first, while they fit in {@link MAX_STORED_CHARS}.
   * Returns how many were kept: the rest could not be (the storage is full, off or refused).
   */
  keep(messages: readonly MessageRecord[]): number
  /** Takes every kept message out of the store (in the order kept) and forgets them there. */
  take(): MessageRecord[]
}

/**
 * A kept message as the client queues it again, or `undefined` for one that cannot be ours: the
 * storage is the page's, and any script of the origin (or a browser extension) can write to it.
 */
function toRecord(value: unknown): MessageRecord | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const fields = value as Record<string, unknown>
  const { type, messageId } = fields
  if (!(MESSAGE_TYPES as readonly unknown[]).includes(type) || typeof messageId !== 'string' || messageId === '')
    return undefined
  const json = JSON.stringify(value)
  if (utf8ByteLength(json) > MAX_MESSAGE_BYTES) return undefined
  return { type: type as MessageType, messageId, json }
}

/** The messages kept under `key`: none when there is nothing, or nothing that parses as ours. */
function load(storage: StorageArea, key: string): MessageRecord[] {
  const raw = storage.getItem(key)
  if (raw === null) return []
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return []
  }
  if (!Array.isArray(parsed)) return []
  return parsed.map(toRecord).filter((record) => record !== undefined)
}

/**
 * The store of one client in a browser page, under `eventwire:unsent:<write key>@<batch URL>`, or
 * `undefined` where there is no `localStorage` (Node, Deno, Workers) or the page may not use it
 * (storage turned off, a sandboxed frame: reading it throws). Messages are kept as the JSON they
 * were serialized to, in one array written by concatenation.
 */
export function unsentStoreFor(batchUrl: string, writeKey: string, storage?: StorageArea): UnsentStore | undefined {
  let area = storage
  try {
    area ??= (globalThis as { localStorage?: StorageArea }).localStorage
  } catch {
    return undefined
  }
  if (area === undefined) return undefined
  const found: StorageArea = area
  const key = `eventwire:unsent:${writeKey}@${batchUrl}`
  return {
    keep(messages) {
      try {
        const kept = load(found, key).map((record) => record.json)
        // `[`, `]` and a comma after each message but the last.
        let chars = kept.reduce((sum, json) => sum + json.length + 1, 1)
        let added = 0
        for (const message of messages) {
          if (chars + message.json.length + 1 > MAX_STORED_CHARS) break
          kept.push(message.json)
          chars += message.json.length + 1
          added++
        }
        if (added > 0) found.setItem(key, `[${kept.join(',')}]`)
        return added
      } catch {
        // Quota exceeded, or storage turned off since: nothing was kept.
        return 0
      }
    },
    take() {
      try {
        const records = load(found, key)
        found.removeItem(key)
        return records
      } catch {
        return []
      }
    },
  }
}
