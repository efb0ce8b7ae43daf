import { setUnrefTimeout } from '../../core/timers.js'
import { REDIS_NOW } from './redis-now.js'

// What the workers write for people beside the deliveries (the attempt log, the bodies kept for
// replay): Redis streams, one per destination, in the queue's hash slot. Entries wait in the
// worker a moment and go in one command for many; each stream is trimmed to the newest
// `maxEntries` and to `maxAgeMs` of Redis's time (stream ids are Redis's time), and the key
// expires `maxAgeMs` after its last write, so that a destination gone quiet leaves nothing behind.
// A worker killed in between loses that moment's entries, never an event; a write that fails is
// reported, and its entries are gone. Nothing here delays a delivery.

/** How many entries a stream keeps, and for how long. */
export interface StreamBounds {
  readonly maxEntries: number
  /** In ms of Redis's clock. */
  readonly maxAgeMs: number
}

/** What one kind of stream is written as, and how much a worker holds of it at most. */
export interface StreamSpec {
  /** The name its script is defined under on the worker's connection. */
  readonly command: string
  /** Each entry's field names, in order: an entry gives one value for each. */
  readonly fields: readonly string[]
  /** How long entries wait in the worker before they are written, in ms. */
  readonly flushMs: number
  /** Most entries one command writes. */
  readonly entriesPerWrite: number
  /** Most characters of values one command writes: a command of many large entries is cut short of it. */
  readonly charsPerWrite: number
  /** Most entries waiting while Redis is slow to take them; beyond, new ones are dropped and counted. */
  readonly maxUnwritten: number
  /** Most characters of values waiting; beyond, new ones are dropped and counted. */
  readonly maxUnwrittenChars: number
}

/** What a stream is written with: BullMQ's ioredis connection. */
export interface StreamStore {
  defineCommand(name: string, definition: { lua: string }): void
}

/** Where a writer reports: entries dropped while Redis was slow, and failed writes. */
export interface StreamWriterHooks {
  failed(error: Error): void
  /** Entries dropped because the worker held its most. */
  dropped(count: number): void
}

/**
 * The script of a spec. KEYS: streams. ARGV[1]: most entries kept; ARGV[2]: longest age in ms;
 * then, for each key, its number of entries and, for each, one value per field.
 */
export function streamWriteLua(fields: readonly string[]): string {
  const pairs = fields.map((field, index) => `'${field}', ARGV[at + ${index + 1}]`).join(', ')
  return `${REDIS_NOW}
local keep, age = ARGV[1], tonumber(ARGV[2])
local at = 3
for k = 1, #KEYS do
  local key = KEYS[k]
  for _ = 1, tonumber(ARGV[at]) do
    redis.call('XADD', key, '*', ${pairs})
    at = at + ${fields.length}
  end
  at = at + 1
  redis.call('XTRIM', key, 'MAXLEN', keep)
  redis.call('XTRIM', key, 'MINID', now - age)
  redis.call('PEXPIRE', key, age)
end
return #KEYS
`
}

/** One entry waiting to be written: its stream, its values in the spec's field order, and their characters. */
interface Unwritten {
  readonly key: string
  readonly values: readonly (string | number)[]
  readonly chars: number
}

type WriteCommand = (keys: number, ...keysThenArgs: Array<string | number>) => Promise<unknown>

/**
 * Gathers entries of one kind and writes them every {@link StreamSpec.flushMs}, many in one
 * command, one write at a time and in order.
 */
export class StreamWriter {
  readonly #spec: StreamSpec
  readonly #bounds: StreamBounds
  readonly #store: () => Promise<StreamStore>
  readonly #hooks: StreamWriterHooks
  #unwritten: Unwritten[] = []
  #unwrittenChars = 0
  #dropped = 0
  #timer: ReturnType<typeof setTimeout> | undefined
  /** The write under way, if any: one at a time, in order. */
  #writing: Promise<void> = Promise.resolve()

  constructor(spec: StreamSpec, bounds: StreamBounds, store: () => Promise<StreamStore>, hooks: StreamWriterHooks) {
    this.#spec = spec
    this.#bounds = bounds
    this.#store = store
    this.#hooks = hooks
  }

  /** Notes one entry for stream `key`; `chars` is how much its values weigh (their largest string's length will do). */
  add(key: string, values: readonly (string | number)[], chars = 0): void {
    const spec = this.#spec
    if (this.#unwritten.length >= spec.maxUnwritten || this.#unwrittenChars + chars > spec.maxUnwrittenChars) {
      this.#dropped++
      return
    }
    this.#unwritten.push({ key, values, chars })
    this.#unwrittenChars += chars
    if (this.#unwritten.length >= spec.entriesPerWrite || this.#unwrittenChars >= spec.charsPerWrite) this.#writeSoon(0)
    else this.#writeSoon(spec.flushMs)
  }

  /** Writes what is gathered now, and resolves once every write so far is done (or failed). */
  flush(): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#write()
    return this.#writing
  }

  #writeSoon(ms: number): void {
    if (this.#timer !== undefined && ms > 0) return
    clearTimeout(this.#timer)
    this.#timer = setUnrefTimeout(() => {
      this.#timer = undefined
      this.#write()
    }, ms)
  }

  #write(): void {
    if (this.#dropped > 0) {
      this.#hooks.dropped(this.#dropped)
      this.#dropped = 0
    }
    const { entriesPerWrite, charsPerWrite } = this.#spec
    while (this.#unwritten.length > 0) {
      // At least one entry a command, however large; then as many as fit both bounds.
      let count = 1
      let chars = (this.#unwritten[0] as Unwritten).chars
      while (count < this.#unwritten.length && count < entriesPerWrite) {
        const next = (this.#unwritten[count] as Unwritten).chars
        if (chars + next > charsPerWrite) break
        chars += next
        count++
      }
      const batch = this.#unwritten.splice(0, count)
      this.#unwrittenChars -= chars
      this.#writing = this.#writing.then(() => this.#send(batch))
    }
  }

  async #send(batch: readonly Unwritten[]): Promise<void> {
    // By stream, each stream's entries in the order they were noted.
    const byKey = new Map<string, (string | number)[][]>()
    for (const { key, values } of batch) {
      const entries = byKey.get(key)
      if (entries === undefined) byKey.set(key, [values as (string | number)[]])
      else entries.push(values as (string | number)[])
    }
    const keys = [...byKey.keys()]
    const args: (string | number)[] = [this.#bounds.maxEntries, this.#bounds.maxAgeMs]
    for (const entries of byKey.values()) {
      args.push(entries.length)
      for (const values of entries) args.push(...values)
    }
    const { command, fields } = this.#spec
    try {
      const store = (await this.#store()) as StreamStore & Record<string, WriteCommand | undefined>
      if (store[command] === undefined) store.defineCommand(command, { lua: streamWriteLua(fields) })
      await (store[command] as WriteCommand)(keys.length, ...keys, ...args)
    } catch (error) {
      this.#hooks.failed(error as Error)
    }
  }
}
