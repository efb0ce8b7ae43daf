import type { ResolvedRetryOptions } from '../../src/client/options.js'
import { NO_PAGE } from '../../src/client/page-exit.js'
import { RateLimitPause } from '../../src/client/retry-policy.js'
import { sendWithRetries, type RetryListener } from '../../src/client/send-loop.js'
import type { BatchBody, BatchTransport, SendResult } from '../../src/client/transport.js'

/** How one send is made in a test: close()'s deadline, the retry listener and the keepalive flag. */
export interface TestSendOptions {
  readonly signal?: AbortSignal | undefined
  readonly onRetry?: RetryListener | undefined
  readonly keepalive?: boolean | undefined
}

/**
 * What the client does with a transport, without the rest of the client: the one retry loop over
 * its attempts, with one 429 pause for all its sends, and plain timers between attempts (a server's
 * page lifecycle, `NO_PAGE`).
 */
export function senderOver(transport: BatchTransport, retry: ResolvedRetryOptions) {
  const pause = new RateLimitPause()
  return (body: BatchBody, options: TestSendOptions = {}): Promise<SendResult> =>
    sendWithRetries(
      (signal) => transport.attempt(body, { signal, keepalive: options.keepalive ?? false }),
      {
        signal: options.signal ?? new AbortController().signal,
        onRetry: options.onRetry ?? (() => undefined),
        waits: NO_PAGE.retryWaits(),
      },
      retry,
      pause,
    )
}
