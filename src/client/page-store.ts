import { serializeCall } from '../core/check-message.js'
import { MESSAGE_TYPES, type MessageType } from '../core/messages.js'
import type { MessageRecord } from './delivery-error.js'

/** The part of the Web Storage API the store uses: `localStorage` in browsers, a stand-in in tests. */
export interface StorageArea {
  readonly length: number
  key(index: number): string | null
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/**
 * Most UTF-16 code units the store holds for one write key and endpoint, in all: a fifth of the
 * 5 MB browsers give an origin, so that the page's own use of `localStorage` keeps its room.
 */
export const MAX_STORED_CHARS = 1_000_000

/**
 * Messages a page could not send as it went away, kept in Web Storage for the next `Client` of the
 * same endpoint and write key on this origin (the next page of the site, or this one coming back
 * from the back-forward cache).
 */
export interface UnsentStore {
  /**
   * Keeps messages, oldest first, while the store stays within {@link MAX_STORED_CHARS}. Returns
   * how many were kept: the rest could not be (the storage is full, off or refused).
   */
  keep(messages: readonly MessageRecord[]): number
  /** Takes every kept message out of the store (each page's in the order kept) and forgets them there. */
  take(): MessageRecord[]
}

/**
 * A kept message as the client queues it again, or `undefined` for one the client would not have
 * sent: the storage is the page's, and any script of the origin (or a browser extension) can
 * write to it, so each message passes the client's own checks again (the id and time it was
 * kept with are kept).
 */
function toRecord(value: unknown): MessageRecord | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const { type, messageId } = value as Record<string, unknown>
  if (!(MESSAGE_TYPES as readonly unknown[]).includes(type) || typeof messageId !== 'string') return undefined
  try {
    const { json } = serializeCall(type as MessageType, value)
    return { type: type as MessageType, messageId, json }
  } catch {
    return undefined
  }
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
 * The store of one client in a browser page, or `undefined` where there is no `localStorage`
 * (Node, Deno, Workers) or the page may not use it (storage turned off, a sandboxed frame:
 * reading it throws). Each page that keeps messages writes a key of its own,
 * `eventwire:unsent:<write key>@<batch URL>:<random id>`, so that tabs leaving at once do not
 * write over each other; the messages' JSON, as serialized at the call, in one array written by
 * concatenation. Taking reads every key of the write key and endpoint.
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
  const prefix = `eventwire:unsent:${writeKey}@${batchUrl}:`
  const keys = () => {
    const matching: string[] = []
    for (let index = 0; index < found.length; index++) {
      const key = found.key(index)
      if (key?.startsWith(prefix)) matching.push(key)
    }
    return matching
  }
  return {
    keep(messages) {
      try {
        // `[`, `]` and a comma after each message but the last, beside what other pages kept.
        let chars = keys().reduce((sum, key) => sum + (found.getItem(key)?.length ?? 0), 1)
        const kept: string[] = []
        for (const message of messages) {
          if (chars + message.json.length + 1 > MAX_STORED_CHARS) break
          kept.push(message.json)
          chars += message.json.length + 1
        }
        if (kept.length > 0) found.setItem(`${prefix}${crypto.randomUUID()}`, `[${kept.join(',')}]`)
        return kept.length
      } catch {
        // Quota exceeded, or storage turned off since: nothing was kept.
        return 0
      }
    },
    take() {
      try {
        return keys().flatMap((key) => {
          const records = load(found, key)
          found.removeItem(key)
          return records
        })
      } catch {
        return []
      }
    },
  }
}
