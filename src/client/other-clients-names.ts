import type { OtherName } from '../core/option-checks.js'
import { WRITE_KEY_FIRST } from './options.js'

/**
 * What other server-side analytics clients call our options: Segment's `@segment/analytics-node`,
 * PostHog's `posthog-node`, and the Go client's `Config` fields (v2 and v3), which a port copies
 * with their capitals. Server runtimes only (the platform modules pass it): a browser page's
 * bundle need not carry names from libraries that never ran there.
 */
export const OTHER_CLIENTS_NAMES: Readonly<Record<string, OtherName>> = {
  writeKey: { advice: WRITE_KEY_FIRST },
  host: 'endpoint',
  path: 'endpoint',
  Endpoint: 'endpoint',
  flushInterval: 'flushAfter',
  Interval: 'flushAfter',
  maxEventsInBatch: 'flushAt',
  Size: 'flushAt',
  BatchSize: 'flushAt',
  httpRequestTimeout: 'timeout',
  requestTimeout: 'timeout',
  maxRetries: 'retry: { limit }',
  MaxRetries: 'retry: { limit }',
  fetchRetryCount: 'retry: { limit }',
  RetryAfter: 'retry: { baseDelay, maxDelay }',
  httpClient: 'fetch',
  Transport: 'fetch',
  Verbose: 'verbose',
  Logger: 'logger',
  DefaultContext: 'defaultContext',
  Callback: { advice: "use `client.on('sent' | 'error')` or a call's own callback" },
  disableCompression: 'compression',
  gzip: 'compression',
}
