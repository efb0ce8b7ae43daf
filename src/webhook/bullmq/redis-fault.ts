// Which errors are Redis's, not the delivery's. A worker that meets one in the middle of a job
// must not decide the job's fate with it: Redis may refuse the very write that would record the
// decision, and a failover answers the same command differently a second later.

/** Names of the errors ioredis gives for a Redis that answered with an error or could not be reached. */
const REDIS_ERROR_NAMES = new Set(['ReplyError', 'MaxRetriesPerRequestError', 'ClusterAllFailedError'])

/**
 * Texts of Redis's refusals and of the connection's failures: error replies (OOM, READONLY,
 * CLUSTERDOWN, LOADING, TRYAGAIN, MOVED, ASK, EXECABORT, BUSY, NOSCRIPT), a cluster that
 * redirected too often, and sockets that closed or never opened.
 */
const REDIS_ERROR_TEXT =
  /^(OOM|READONLY|CLUSTERDOWN|LOADING|TRYAGAIN|MOVED|ASK|EXECABORT|BUSY|NOSCRIPT|MASTERDOWN)\b|Too many Cluster redirections|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE/

/** Whether `error` came from Redis or the connection to it, rather than from eventwire or a receiver. */
export function isRedisFault(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  return REDIS_ERROR_NAMES.has(error.name) || REDIS_ERROR_TEXT.test(error.message)
}

/** Whether `error` is a full Redis refusing a write under `maxmemory-policy noeviction`. */
export function isOutOfMemory(error: unknown): boolean {
  return error instanceof Error && /^OOM\b|\bOOM command not allowed\b/.test(error.message)
}
