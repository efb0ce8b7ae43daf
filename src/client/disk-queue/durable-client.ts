import { isoNow } from '../../core/clock.js'
import { checkMessage } from '../../core/check-message.js'
import { consoleLogger, guardLogger, type Logger } from '../../core/debug.js'
import { describeError } from '../../core/describe-error.js'
import { OptionsError } from '../../core/errors/options-error.js'
import type { AliasMessage, JsonObject, MessageType, PageMessage, ScreenMessage } from '../../core/messages.js'
import { checkOptionNames, integerOption } from '../../core/option-checks.js'
import type { GroupInput, IdentifyInput, NoPlan, TrackInput, TrackingPlan } from '../../core/plan.js'
import { MAX_TIMER_MS } from '../../core/timers.js'
import { isObject } from '../../core/validate.js'
import type { MessageCallback } from '../batch.js'
import { Client } from '../client.js'
import type { ClientEvents, CloseOptions } from '../client-base.js'
import { DeliveryError, type DeliveryErrorCode, type MessageRecord } from '../delivery-error.js'
import { DEBUG_NAMESPACE, type ClientOptions, type PlanOption } from '../options.js'
import { DiskJournal, type JournalSettings, type Recovery } from './disk-journal.js'

/** The `disk` option of {@link DurableClient}: where and how much it keeps. */
export interface DiskQueueOptions {
  /** The queue's directory, made if missing. One client of one process at a time: a second is refused (`ERR_QUEUE_LOCKED`). */
  directory: string
  /**
   * Most bytes of the queue's files. A call that would take them past it is dropped with
   * `ERR_QUEUE_FULL`, as at a full queue in memory. @defaultValue 268_435_456 (256 MiB)
   */
  maxBytes?: number | undefined
  /**
   * Oldest a kept message may be, in ms, when a client reads the directory at start: older ones are
   * not sent, and are reported with `ERR_QUEUE_FULL`. @defaultValue 604_800_000 (7 days)
   */
  maxAge?: number | undefined
  /**
   * Longest time, in ms, between a write and its `fdatasync`: what a power loss (not a crash of the
   * process, which loses nothing written) can take. `0` syncs every call, at a cost in throughput
   * that depends on the disk. @defaultValue 1_000
   */
  syncInterval?: number | undefined
  /** Bytes from which a new segment file is started; a segment is deleted once all its messages are settled. @defaultValue 4_194_304 (4 MiB) */
  segmentBytes?: number | undefined
}

/** Options of {@link DurableClient}: those of `Client`, and `disk`. */
export interface DurableClientOptions extends ClientOptions {
  /** Where the queue is kept. */
  disk: DiskQueueOptions
}

/** What a {@link DurableClient} found in its directory at start. */
export interface DiskRecovery {
  /** Messages of earlier runs queued again, with their original `messageId`. */
  readonly resent: number
  /** Messages older than `maxAge`, or past the client's bounds, or refused by its checks: reported and dropped. */
  readonly dropped: number
  /** Torn or corrupt stretches of the files skipped (a record cut by a crash, bytes changed on disk). */
  readonly corrupt: number
  /** Bytes in those stretches. */
  readonly corruptBytes: number
}

/** The defaults of {@link DiskQueueOptions}. */
export const DISK_DEFAULTS = {
  maxBytes: 256 * 1024 * 1024,
  maxAge: 7 * 24 * 60 * 60 * 1000,
  syncInterval: 1_000,
  segmentBytes: 4 * 1024 * 1024,
} as const

const DISK_OPTION_NAMES: Readonly<Record<keyof DiskQueueOptions, true>> = {
  directory: true,
  maxBytes: true,
  maxAge: true,
  syncInterval: true,
  segmentBytes: true,
}

/** Failures after which a message is settled and leaves the disk; the rest (`ERR_CLOSE_TIMEOUT`) stay for the next start. */
const SETTLING: ReadonlySet<DeliveryErrorCode> = new Set([
  'ERR_REJECTED',
  'ERR_RETRIES_EXHAUSTED',
  'ERR_INVALID_RESPONSE',
])

/** A kept call as the client would have sent it (what a `DeliveryError` lists), or as kept when the client would refuse it. */
function asSent(kept: MessageRecord, message: unknown): MessageRecord {
  try {
    return { ...kept, json: JSON.stringify(checkMessage(kept.type, message)) }
  } catch {
    return kept
  }
}

/** The `disk` option, checked. */
function resolveDisk(value: unknown): JournalSettings & { readonly maxAge: number } {
  if (!isObject(value)) throw new OptionsError('disk', "expected an object such as { directory: './analytics-queue' }.")
  checkOptionNames(value, DISK_OPTION_NAMES, {}, 'disk.')
  const { directory } = value
  if (typeof directory !== 'string' || directory === '') {
    throw new OptionsError('disk.directory', 'expected the path of a directory this process may write to.')
  }
  return {
    directory,
    maxBytes: integerOption('disk.maxBytes', value['maxBytes'], DISK_DEFAULTS.maxBytes, 1024 * 1024),
    maxAge: integerOption('disk.maxAge', value['maxAge'], DISK_DEFAULTS.maxAge, 1),
    syncInterval: integerOption(
      'disk.syncInterval',
      value['syncInterval'],
      DISK_DEFAULTS.syncInterval,
      0,
      MAX_TIMER_MS,
    ),
    segmentBytes: integerOption('disk.segmentBytes', value['segmentBytes'], DISK_DEFAULTS.segmentBytes, 4096),
  }
}

/** The options without `disk`, for `Client`'s own checks (which refuse a name they do not know). */
function clientOptionsOf(options: unknown): ClientOptions {
  if (!isObject(options) || !Object.hasOwn(options, 'disk')) {
    throw new OptionsError(
      'disk',
      "expected { disk: { directory: './analytics-queue' } }: a DurableClient keeps its queue in a directory.",
    )
  }
  const { disk: _disk, ...rest } = options
  return rest as ClientOptions
}

/**
 * A `Client` whose queue survives the process: every accepted call is written to a directory
 * before it returns, and a client started on that directory sends again, with their original
 * `messageId`, the messages the endpoint had not acknowledged. For servers: Node, Deno and Bun.
 *
 * - A process killed at any moment (SIGKILL, the OOM killer, a crash) loses nothing a call
 *   accepted: the write is done when the call returns. A power loss can take the last
 *   `syncInterval` ms of writes.
 * - Delivery is at least once: messages in flight when the process died are sent again.
 * - A record torn by a crash or changed on disk is skipped, counted ({@link DurableClient.recovery})
 *   and logged; it never stops a start.
 * - Past `disk.maxBytes` a call is dropped with `ERR_QUEUE_FULL`; at start, messages older than
 *   `disk.maxAge` are dropped and reported the same way.
 * - A message that failed for good (`ERR_REJECTED`, `ERR_RETRIES_EXHAUSTED`) leaves the disk as it
 *   leaves the client; one that `close()` could not send in time (`ERR_CLOSE_TIMEOUT`) stays for the
 *   next start.
 *
 * See docs/client.md, "A queue on disk".
 *
 * @example
 * ```ts
 * import { DurableClient } from 'eventwire/disk-queue'
 *
 * const client = new DurableClient('WRITE_KEY', {
 *   endpoint: 'https://ingest.example.com',
 *   disk: { directory: './analytics-queue' },
 * })
 * client.track({ userId: 'u1', event: 'Signed Up' })
 * await client.close()
 * ```
 */
export class DurableClient<Plan extends TrackingPlan | NoPlan = NoPlan> extends Client<Plan> {
  readonly #journal: DiskJournal
  readonly #logger: Logger
  #recovery: DiskRecovery = { resent: 0, dropped: 0, corrupt: 0, corruptBytes: 0 }
  /** Records this client wrote, to tell its own call's message from those of a middleware's nested calls. */
  #written = 0
  /** Set as close() begins: from then on calls go to the client, which refuses them. */
  #closing = false
  /** Whether a failed write or acknowledgement was logged: once per client, not once per call. */
  #failureLogged = false
  /** Calls dropped at the disk's cap in this tick, reported together. */
  #refused: { record: MessageRecord; callback: MessageCallback | undefined }[] = []

  /**
   * @param writeKey - The write key of your source.
   * @param options - `Client`'s options, and `disk`.
   * @throws {@link OptionsError} for an option it cannot use; {@link DiskQueueError} when the
   * directory is held by another process (`ERR_QUEUE_LOCKED`) or cannot be used (`ERR_QUEUE_DIRECTORY`).
   */
  constructor(writeKey: string, options: DurableClientOptions & PlanOption<Plan>) {
    super(writeKey, clientOptionsOf(options) as ClientOptions & PlanOption<Plan>)
    const { maxAge, ...settings } = resolveDisk(options.disk)
    this.#logger = options.logger === undefined ? consoleLogger(DEBUG_NAMESPACE) : guardLogger(options.logger)
    let recovery: Recovery = { records: [], corrupt: 0, corruptBytes: 0, unreadable: [] }
    this.#journal = new DiskJournal(settings, (found) => {
      recovery = found
    })
    this.#replay(recovery, maxAge)
  }

  /** What the client found in its directory at start. */
  get recovery(): DiskRecovery {
    return this.#recovery
  }

  /** Bytes of the queue's files now. */
  get diskBytes(): number {
    return this.#journal.bytes
  }

  override identify<Traits extends object = JsonObject>(
    message: IdentifyInput<Plan, Traits>,
    callback?: MessageCallback,
  ): boolean {
    return this.#call('identify', message, callback)
  }

  override track<Properties extends object = JsonObject>(
    message: TrackInput<Plan, Properties>,
    callback?: MessageCallback,
  ): boolean {
    return this.#call('track', message, callback)
  }

  override page<Properties extends object = JsonObject>(
    message: PageMessage<Properties>,
    callback?: MessageCallback,
  ): boolean {
    return this.#call('page', message, callback)
  }

  override screen<Properties extends object = JsonObject>(
    message: ScreenMessage<Properties>,
    callback?: MessageCallback,
  ): boolean {
    return this.#call('screen', message, callback)
  }

  override group<Traits extends object = JsonObject>(
    message: GroupInput<Plan, Traits>,
    callback?: MessageCallback,
  ): boolean {
    return this.#call('group', message, callback)
  }

  override alias(message: AliasMessage, callback?: MessageCallback): boolean {
    return this.#call('alias', message, callback)
  }

  /**
   * Closes as `Client` does, then syncs the files and lets the directory go. What `close()` could
   * not send in time stays on disk for the next client of the directory.
   */
  override async close(options?: CloseOptions): Promise<void> {
    this.#closing = true
    try {
      await super.close(options)
    } finally {
      this.#journal.close()
    }
  }

  /**
   * Settles messages on disk as the client reports them: sent, or failed for good. The client's
   * own reporting is unchanged (an `'error'` nobody listens to is still logged).
   */
  protected override emit<Name extends keyof ClientEvents>(event: Name, ...args: ClientEvents[Name]): boolean {
    try {
      if (event === 'sent') this.#journal.settle((args as ClientEvents['sent'])[0].messages)
      else if (event === 'error') {
        const [error] = args as ClientEvents['error']
        if (SETTLING.has(error.code)) this.#journal.settle(error.messages)
      }
    } catch (failure) {
      // The messages settled all the same: on disk they are sent again at the next start.
      this.#failed('could not record acknowledgements; those messages will be sent again at the next start', failure)
    }
    return super.emit(event, ...args)
  }

  /** The parent's call of `type`. */
  #send(type: MessageType, message: unknown, callback: MessageCallback | undefined): boolean {
    const input = message as never
    switch (type) {
      case 'identify':
        return super.identify(input, callback)
      case 'track':
        return super.track(input, callback)
      case 'page':
        return super.page(input, callback)
      case 'screen':
        return super.screen(input, callback)
      case 'group':
        return super.group(input, callback)
      case 'alias':
        return super.alias(input, callback)
    }
  }

  /**
   * A call: its `messageId` and `timestamp` fixed first (so that the message sent again after a
   * crash is the same message), then the client's own call, then, if the client queued it, its
   * record written before the call returns.
   */
  #call(type: MessageType, message: unknown, callback: MessageCallback | undefined): boolean {
    if (!isObject(message) || this.#closing) return this.#send(type, message, callback)
    const stamped = {
      ...message,
      // Absent or empty: the client would make one, and the record must carry the id that is sent.
      messageId:
        message['messageId'] === undefined || message['messageId'] === '' ? crypto.randomUUID() : message['messageId'],
      timestamp: message['timestamp'] === undefined ? isoNow() : message['timestamp'],
    }
    let json: string
    try {
      json = JSON.stringify(stamped)
    } catch {
      // The client refuses what JSON cannot write (cycles, BigInt), with its own words.
      return this.#send(type, message, callback)
    }
    if (this.#journal.full(json)) return this.#refuse(type, stamped, callback)
    const before = this.pending
    const written = this.#written
    const accepted = this.#send(type, stamped, callback)
    // Queued: one more message held, besides what a middleware's own calls added meanwhile.
    if (this.pending - before - (this.#written - written) === 1) {
      try {
        this.#journal.append(type, json, stamped.messageId as string)
        this.#written++
      } catch (failure) {
        // Queued all the same: it is sent from memory, but a crash would lose it.
        this.#failed('could not write a message; it is queued in memory only', failure)
      }
    }
    return accepted
  }

  /** A write the system refused (a full disk, a directory removed): logged once. */
  #failed(what: string, failure: unknown): void {
    if (this.#failureLogged) return
    this.#failureLogged = true
    this.#logger.error(`disk queue ${this.#journal.settings.directory}: ${what}: ${describeError(failure)}.`)
  }

  /**
   * A call past `disk.maxBytes`: checked as the client checks it (a bad call still throws), then
   * dropped and reported as at a full queue, after the call returns, with the others of this tick.
   */
  #refuse(type: MessageType, stamped: Record<string, unknown>, callback: MessageCallback | undefined): boolean {
    const wire = checkMessage(type, stamped)
    const record = { type, messageId: wire.messageId, json: JSON.stringify(wire) }
    if (this.#refused.push({ record, callback }) === 1) {
      queueMicrotask(() => {
        const refused = this.#refused.splice(0)
        const { directory, maxBytes } = this.#journal.settings
        this.#report(
          new DeliveryError(
            'ERR_QUEUE_FULL',
            `Dropped ${refused.length} message(s): the disk queue in ${directory} is at disk.maxBytes (${maxBytes} bytes). Messages leave it as the endpoint acknowledges them; raise disk.maxBytes if the endpoint is up.`,
            { messages: refused.map((entry) => entry.record) },
          ),
          refused.map((entry) => entry.callback),
        )
      })
    }
    return false
  }

  /** An error of the queue's own: `'error'` listeners and callbacks, or the logger when nobody hears it. */
  #report(error: DeliveryError, callbacks: readonly (MessageCallback | undefined)[]): void {
    const listened = super.emit('error', error)
    let everyOneHasCallback = callbacks.length > 0
    for (const callback of callbacks) {
      if (callback === undefined) everyOneHasCallback = false
      else {
        try {
          callback(error, 'failed')
        } catch (thrown) {
          this.onListenerError(thrown)
        }
      }
    }
    if (!listened && !everyOneHasCallback) this.#logger.error(`${error.code}: ${error.message}`)
  }

  /**
   * Queues again what earlier runs left, oldest first, with their ids and timestamps. Older than
   * `maxAge`, refused by the client's checks, or past its bounds: dropped, acknowledged, and
   * reported after the constructor returns (its listeners are attached by then).
   */
  #replay(recovery: Recovery, maxAge: number): void {
    const oldest = Date.now() - maxAge
    const dropped: MessageRecord[] = []
    const release: number[] = []
    let resent = 0
    for (const record of recovery.records) {
      let message: unknown
      try {
        message = JSON.parse(record.json)
      } catch {
        message = undefined
      }
      const messageId = isObject(message) ? message['messageId'] : undefined
      if (typeof messageId !== 'string') {
        release.push(record.location)
        continue
      }
      const kept = { type: record.type, messageId, json: record.json }
      if (record.time * 1000 < oldest) {
        dropped.push(asSent(kept, message))
        release.push(record.location)
        continue
      }
      const before = this.pending
      const written = this.#written
      try {
        this.#send(record.type, message, undefined)
      } catch {
        dropped.push(asSent(kept, message))
        release.push(record.location)
        continue
      }
      if (this.pending - before - (this.#written - written) !== 1) {
        // Past the client's bounds (reported by the client as ERR_QUEUE_FULL), or dropped by a middleware.
        release.push(record.location)
        continue
      }
      this.#journal.adopt(messageId, record.location)
      resent++
    }
    this.#journal.release(release)
    this.#recovery = {
      resent,
      dropped: release.length,
      corrupt: recovery.corrupt,
      corruptBytes: recovery.corruptBytes,
    }
    const { directory } = this.#journal.settings
    if (recovery.unreadable.length > 0) {
      this.#logger.error(
        `disk queue ${directory}: could not read ${recovery.unreadable.length} segment file(s) at start, skipped and left in place: ${recovery.unreadable.join('; ')}.`,
      )
    }
    if (recovery.corrupt > 0) {
      this.#logger.error(
        `disk queue ${directory}: skipped ${recovery.corrupt} torn or corrupt stretch(es) of its files (${recovery.corruptBytes} bytes) at start; the records around them were read.`,
      )
    }
    if (dropped.length > 0) {
      queueMicrotask(() =>
        this.#report(
          new DeliveryError(
            'ERR_QUEUE_FULL',
            `Dropped ${dropped.length} message(s) kept in ${directory}: older than disk.maxAge (${maxAge} ms), or refused by the client's checks, at start.`,
            { messages: dropped },
          ),
          [],
        ),
      )
    }
    if (resent > 0) void this.flush()
  }
}
