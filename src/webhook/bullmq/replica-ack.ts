import { nodeHolding, slotOfPrefix, type NodeConnection } from './cluster-slot.js'
import { ReplicaAckError } from './replica-ack-error.js'

/**
 * `waitForReplicas`: how many replicas must confirm an enqueued event before `enqueue()`
 * resolves, and how long the primary waits for them (Redis's `WAIT numreplicas timeout`).
 */
export interface WaitForReplicas {
  /** Replicas that must have the write. */
  readonly count: number
  /** How long the primary waits for them (ms). */
  readonly timeoutMs: number
}

/** Callers waiting for the next `WAIT` on one connection, and whether one is out. */
interface Batch {
  running: boolean
  waiting: Array<{ resolve(acknowledged: number): void; reject(error: unknown): void }>
}

/**
 * Makes a write wait until `count` replicas have it, with `WAIT` on the connection that wrote it:
 * Redis answers `WAIT` for the writes of the connection that sends it, so on a Redis Cluster it
 * goes to the master that holds the queue's slot, on that master's own connection.
 *
 * A `WAIT` covers every earlier write of its connection, so writes that finish while one is out
 * share the next one (a group commit): concurrent enqueues cost one `WAIT` per round trip to the
 * replicas, not one each.
 */
export class ReplicaAck {
  readonly #count: number
  readonly #timeoutMs: number
  /** The slot of the queue's keys, for a cluster connection. */
  readonly #slot: number | undefined
  readonly #batches = new WeakMap<NodeConnection, Batch>()

  constructor(options: WaitForReplicas, prefix: string) {
    this.#count = options.count
    this.#timeoutMs = options.timeoutMs
    this.#slot = slotOfPrefix(prefix)
  }

  /**
   * Runs `write` (one BullMQ command on `connection`), then waits for the replicas.
   *
   * @throws {@link ReplicaAckError} (as a rejection) when fewer replicas confirmed it in time, when
   *   Redis refused `WAIT`, or when the connection changed between the write and its `WAIT` (a
   *   reconnect, a failover, a moved slot): a `WAIT` on another connection would not cover it.
   */
  async confirm<Result>(
    connection: unknown,
    write: () => Promise<Result>,
    eventIds: readonly string[],
    retrySafe: boolean,
  ): Promise<Result> {
    const node = this.#nodeOf(connection)
    const socket = node?.stream
    const result = await write()
    if (node === undefined || this.#nodeOf(connection) !== node || node.stream !== socket)
      throw this.#failure(eventIds, retrySafe, 'moved')
    let acknowledged: number
    try {
      acknowledged = await this.#wait(node)
    } catch (error) {
      // Redis's own answer (WAIT unknown, refused by an ACL): no replica will confirm anything.
      if (error instanceof Error && error.name === 'ReplyError') throw this.#failure(eventIds, retrySafe, error)
      throw error
    }
    // A reconnect while WAIT was out: it ran on a new connection, which had written nothing.
    if (this.#nodeOf(connection) !== node || node.stream !== socket) throw this.#failure(eventIds, retrySafe, 'moved')
    if (acknowledged < this.#count) throw this.#failure(eventIds, retrySafe, acknowledged)
    return result
  }

  /** The connection that writes the queue's keys. */
  #nodeOf(connection: unknown): NodeConnection | undefined {
    return nodeHolding(connection, this.#slot)
  }

  #wait(node: NodeConnection): Promise<number> {
    let batch = this.#batches.get(node)
    if (batch === undefined) {
      batch = { running: false, waiting: [] }
      this.#batches.set(node, batch)
    }
    const answer = new Promise<number>((resolve, reject) => batch.waiting.push({ resolve, reject }))
    if (!batch.running) {
      batch.running = true
      // After the microtasks already queued: the other writes of the same transaction (enqueue()
      // gathers the calls of a turn into one) resume there, and join this first WAIT.
      queueMicrotask(() => void this.#drain(node, batch))
    }
    return answer
  }

  /** Sends one `WAIT` for everyone waiting, again while more came during it. */
  async #drain(node: NodeConnection, batch: Batch): Promise<void> {
    while (batch.waiting.length > 0) {
      const waiting = batch.waiting.splice(0)
      try {
        const acknowledged = Number(await node.call('WAIT', this.#count, this.#timeoutMs))
        for (const waiter of waiting) waiter.resolve(acknowledged)
      } catch (error) {
        for (const waiter of waiting) waiter.reject(error)
      }
    }
    batch.running = false
  }

  #failure(eventIds: readonly string[], retrySafe: boolean, what: number | 'moved' | Error): ReplicaAckError {
    const one = eventIds.length === 1
    const event = one ? `Event ${JSON.stringify(eventIds[0])}` : `${eventIds.length} events`
    const is = one ? 'is' : 'are'
    const advice = retrySafe
      ? one
        ? 'enqueue it again with the same messageId: that is safe, the same messageId is stored once'
        : 'enqueue them again with the same messageIds: that is safe, each messageId is stored once'
      : 'give events a messageId before enqueueing them again: without one, a second enqueue is a second event'
    const it = one ? 'it' : 'them'
    const asked = `${this.#count} replica${this.#count === 1 ? '' : 's'}`
    if (what === 'moved') {
      return new ReplicaAckError(
        `${event} ${one ? 'was' : 'were'} sent to Redis, but the connection to the primary holding ${it} changed (a reconnect, a failover or a moved slot) before ${asked} could confirm ${it}: ${it} may or may not survive a failover. Once Redis is stable, ${advice}.`,
        0,
        this.#count,
        this.#timeoutMs,
      )
    }
    if (what instanceof Error) {
      return new ReplicaAckError(
        `${event} ${is} stored on the Redis primary, but Redis refused WAIT (${what.message}), so no replica confirmed ${it}: ${it} may or may not survive a failover. Leave waitForReplicas out where Redis has no WAIT, and set min-replicas-to-write on the server instead; ${advice}.`,
        0,
        this.#count,
        this.#timeoutMs,
        what,
      )
    }
    return new ReplicaAckError(
      `${event} ${is} stored on the Redis primary, but ${what} of the ${asked} asked for (waitForReplicas) confirmed ${it} within ${this.#timeoutMs} ms: ${it} may or may not survive a failover. Check the replicas (INFO replication on the primary), then ${advice}.`,
      what,
      this.#count,
      this.#timeoutMs,
    )
  }
}
