import { EventwireError } from '../../core/errors/eventwire-error.js'

/**
 * Thrown (as a rejection of `WebhookQueue.enqueue()`, `enqueueBulk()` or `ready()`) when Redis
 * answered, with an error reply: it is full (`OOM`), a read-only replica (`READONLY`), still
 * loading its data (`LOADING`), cannot write to disk (`MISCONF`), or a cluster that is down or
 * whose slots keep moving (`CLUSTERDOWN`, `MOVED`). The message names the reply and what to do;
 * `cause` is the reply, as ioredis gave it. Unlike `RedisTimeoutError` (`ERR_TIMEOUT`), it comes
 * as soon as Redis answers: Redis is up and refuses.
 *
 * @example
 * ```ts
 * import { RedisRefusedError, WebhookQueue } from 'eventwire/webhook/bullmq'
 *
 * const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: 6379 } })
 * const event = { type: 'track', messageId: 'order-1042', userId: 'u1', event: 'Paid' } as const
 * try {
 *   await queue.enqueue(event)
 * } catch (error) {
 *   // Redis is up and said no, e.g. OOM: page someone rather than retry at once.
 *   if (error instanceof RedisRefusedError) console.error(error.message)
 * }
 * ```
 */
export class RedisRefusedError extends EventwireError<'ERR_REDIS_REFUSED'> {
  constructor(message: string, cause: Error) {
    super('ERR_REDIS_REFUSED', message, { cause })
  }
}

/** The words of ioredis's error after the redirections of a cluster command ran out. */
const TOO_MANY_REDIRECTIONS = /^Too many Cluster redirections\. Last error: ReplyError: /

/**
 * The error reply of Redis inside `error`, when Redis answered with one: the error itself (an
 * ioredis `ReplyError`), or, for a transaction Redis discarded (`EXECABORT`), the reply that made
 * it discard it (ioredis keeps the queued commands' errors in `previousErrors`). `undefined` for
 * anything else: a connection that failed or closed, a command that timed out.
 */
export function redisReplyOf(error: unknown): Error | undefined {
  if (!(error instanceof Error)) return undefined
  if (error.name === 'ReplyError') {
    if (error.message.startsWith('EXECABORT')) {
      const previous = (error as { previousErrors?: unknown }).previousErrors
      const first = Array.isArray(previous) ? previous.find((item) => item instanceof Error) : undefined
      if (first instanceof Error) return first
    }
    return error
  }
  // A cluster command (not a transaction) that met MOVED, ASK, TRYAGAIN or CLUSTERDOWN too often:
  // ioredis keeps only the reply's text.
  if (TOO_MANY_REDIRECTIONS.test(error.message)) return error
  return undefined
}

/** What a refusal's reply means and what to do about it, by its first word. */
function adviceFor(kind: string): string {
  switch (kind) {
    case 'OOM':
      return 'Redis is full: it reached maxmemory, and with maxmemory-policy noeviction it refuses writes. A full Redis stops workers too (it refuses their scripts), so the backlog does not drain by itself. Raise maxmemory (CONFIG SET maxmemory) or free memory'
    case 'READONLY':
      return 'The connection reached a read-only replica, not the primary (after a failover, or a wrong host). Point the connection at the primary (Sentinel or Cluster options let ioredis find it)'
    case 'LOADING':
      return 'Redis is still loading its data after a restart. Wait until it has loaded'
    case 'MISCONF':
      return 'Redis cannot save to disk and refuses writes until it can. Check its disk and its log'
    case 'CLUSTERDOWN':
      return 'The Redis Cluster is down: a slot has no master it can reach. Wait until the cluster has recovered (CLUSTER INFO)'
    case 'MOVED':
    case 'ASK':
    case 'TRYAGAIN':
      return 'The Redis Cluster kept redirecting the write: its slots are moving (resharding, a failover). Wait until they settle'
    case 'NOPERM':
    case 'NOAUTH':
    case 'WRONGPASS':
      return "Redis's access control refuses the command. Give the connection's user the rights BullMQ needs"
    default:
      return 'Fix what the reply names'
  }
}

/**
 * The error for a Redis that answered `reply` (from {@link redisReplyOf}); `what` opens the
 * message (what could not be done), `advice` closes it (what to do once it is fixed).
 */
export function refusedBy(reply: Error, what: string, advice: string): RedisRefusedError {
  const text = reply.message.replace(TOO_MANY_REDIRECTIONS, '')
  const kind = /^[A-Z]+/.exec(text)?.[0] ?? ''
  const line = text.split('\n', 1)[0]?.trim() ?? text
  return new RedisRefusedError(`${what}: Redis refused it (${line}). ${adviceFor(kind)}, ${advice}.`, reply)
}
