// A number a page states about the package comes from the source, or this fails: every options
// table's defaults are read against what the constructors fill in, and every measure in the guides
// (bytes, KB, ms, seconds...) must be a value the source gives, or be listed below as not a fact
// about the package (an example's size, a sample output).
import { BREAKER_REFRESH_MS } from '../src/webhook/bullmq/shared-breakers.js'
import { LANE_WAIT_MS, RETURN_HORIZON_MS } from '../src/webhook/bullmq/worker-lanes.js'
import { CLOSE_MARGIN_MS } from '../src/webhook/bullmq/worker.js'
import { CLOCK_SKEW_WARNING_MS } from '../src/webhook/bullmq/redis-clock.js'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { DEFAULTS, MAX_DEFAULT_CONTEXT_BYTES, resolveClientOptions } from '../src/client/options.js'
import { DEFAULT_CLOSE_TIMEOUT } from '../src/client/client-base.js'
import { KEEPALIVE_BUDGET } from '../src/client/page-exit.js'
import { DISK_DEFAULTS } from '../src/client/disk-queue/durable-client.js'
import { HEADER_BYTES } from '../src/client/disk-queue/records.js'
import { lostAtExitLine } from '../src/client/process-exit.js'
import { MAX_BATCH_BYTES, MAX_MESSAGE_BYTES } from '../src/core/limits.js'
import { MAX_WEBHOOKS, resolveWebhookSettings } from '../src/webhook/delivery/settings.js'
import { DEFAULT_QUEUE_NAME } from '../src/webhook/bullmq/queue.js'
import { REPLICA_WAIT_DEFAULT_MS, resolveQueueOptions, resolveWorkerOptions } from '../src/webhook/bullmq/options.js'
import { DEFAULT_COUNTS_TIMEOUT } from '../src/webhook/otel/instrument.js'
import { DEFAULT_IDLE_MS } from '../src/http1/connection.js'
import { MAX_HEAD_BYTES } from '../src/http1/response-reader.js'
import { REGISTRY_FRESH_MS, REGISTRY_POLL_MS } from '../src/webhook/bullmq/registry-watch.js'
import {
  ATTEMPT_LOG_DEFAULTS,
  ATTEMPT_LOG_FLUSH_MS,
  MAX_UNWRITTEN_ATTEMPTS,
} from '../src/webhook/bullmq/attempt-log.js'
import { MAX_ATTEMPTS_READ, resolveAttemptsOptions } from '../src/webhook/bullmq/logged-attempt.js'
import { MAX_CAUSE_TEXT } from '../src/webhook/delivery/failure.js'
import {
  KEEP_SENT_DEFAULTS,
  KEEP_SENT_FLUSH_MS,
  MAX_KEPT_PER_DESTINATION,
  MAX_UNWRITTEN_BODY_CHARS,
} from '../src/webhook/bullmq/sent-bodies.js'
import { REPLAY_PAGE } from '../src/webhook/bullmq/replay.js'
import { DEFAULT_SERVE_PORT, REPEATS_WINDOW_MS } from '../src/cli/serve/command.js'
import { MAX_TLS_SESSIONS } from '../src/http1/tls-sessions.js'
import { MAX_SOURCE_DESTINATIONS, MAX_WRITE_KEYS } from '../src/webhook/bullmq/source-record.js'
import { DEFAULT_MAX_CONNECTIONS, DROPS_LOGGED_EVERY_MS, MAX_HEADERS } from '../src/cli/serve/serve-server.js'
import { DEFAULT_RATE_LIMIT } from '../src/cli/serve/source-rates.js'
import { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../src/cli/ingest/ingest-request.js'
import { ALERT_DEFAULTS } from '../src/webhook/bullmq/delivery-alerts.js'
import { ADMITTED_TTL_MS, FAIR_WINDOW, SWEEP_MS } from '../src/webhook/bullmq/fair-queueing.js'
import { IDS_PER_SHARD, SHARD_GROWTH, SPANS_PER_WINDOW } from '../src/webhook/bullmq/remembered-ids.js'
import { MAX_DESTINATION_LABELS, OTHER_DESTINATIONS } from '../src/webhook/otel/attributes.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]
const text = (page: string) => readFileSync(join(root, page), 'utf8')

/** A default as a table shows it, the way the source would write it: `5_000` and `5000` are one. */
function normalized(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value)
}

/** The rows of every `| option | default |` (or `setting`) table of `page`: name, default cell, line. */
function defaultRows(page: string): { name: string; cell: string; line: number }[] {
  const rows: { name: string; cell: string; line: number }[] = []
  let inTable = false
  text(page)
    .split('\n')
    .forEach((line, index) => {
      if (/^\| (option|setting) \| default \|/.test(line)) inTable = true
      else if (!line.startsWith('|')) inTable = false
      else if (inTable && !line.startsWith('| ---')) {
        const [, name, cell] = line.split('|').map((part) => part.trim())
        rows.push({ name: (name ?? '').replace(/`/g, ''), cell: cell ?? '', line: index + 1 })
      }
    })
  return rows
}

/** The default a table cell states: its first code span, with digit separators gone; `undefined` for prose (`none`, `required`). */
function statedDefault(cell: string): string | undefined {
  const code = /`([^`]+)`/.exec(cell)?.[1]
  return code === undefined ? undefined : code.replace(/(\d)_(?=\d)/g, '$1')
}

const client = resolveClientOptions('k', {})
const webhook = resolveWebhookSettings({ webhooks: [{ url: 'https://hooks.example.com/in' }] })
const queue = resolveQueueOptions({ connection: {} })
const worker = resolveWorkerOptions({ connection: {} })

/** Each table's defaults, by page, as the constructors fill them in. */
const SOURCES: Record<string, Record<string, unknown>> = {
  'README.md': {
    endpoint: client.batchUrl.replace(/\/v1\/batch$/, ''),
    flushAt: client.flushAt,
    flushAfter: client.flushAfter,
    timeout: client.timeout,
    'retry.limit': client.retry.limit,
    'retry.baseDelay': client.retry.baseDelay,
    'retry.maxDelay': client.retry.maxDelay,
    'retry.maxRetryAfter': client.retry.maxRetryAfter,
    maxConcurrentRequests: client.maxConcurrentRequests,
    maxQueueSize: client.maxQueueSize,
    maxQueueBytes: client.maxQueueBytes,
    highWaterMark: client.highWaterBytes,
    flushOnPageHide: client.flushOnPageHide,
    storeOnPageHide: client.storeOnPageHide,
    compression: client.compressFrom === undefined ? 'none' : 'gzip',
    compressionThreshold: resolveClientOptions('k', { compression: 'gzip' }).compressFrom,
    planCheck: DEFAULTS.planCheck,
  },
  'docs/webhooks.md': {
    timeoutMs: webhook.timeoutMs,
    retryWindowMs: webhook.retryWindowMs,
    mode: webhook.mode,
    maxConcurrency: webhook.maxConcurrency,
    maxConcurrencyPerUrl: webhook.maxConcurrencyPerUrl,
    maxPendingPerUrl: webhook.maxPendingPerUrl,
    blockPrivateNetworks: webhook.blockPrivateNetworks,
  },
  'docs/durable-delivery.md': {
    name: DEFAULT_QUEUE_NAME,
    prefix: queue.prefix,
    durability: queue.durability,
    enqueueTimeout: queue.enqueueTimeout,
    dedupWindowMs: queue.dedupWindowMs,
    concurrency: worker.concurrency,
    lockDuration: worker.lockDuration,
    stalledInterval: worker.stalledInterval,
  },
  'docs/metrics.md': {
    countsTimeout: DEFAULT_COUNTS_TIMEOUT,
  },
}

describe('options tables', () => {
  it.each(pages)('every default in the tables of %s is what the source fills in', (page) => {
    const source = SOURCES[page] ?? {}
    const wrong = defaultRows(page).flatMap(({ name, cell, line }) => {
      const stated = statedDefault(cell)
      // Only literal values: not prose (`none`), a formula (`5_000 * 2 ** attempt`) or a name (`EVENTWIRE_SECRET`).
      if (stated === undefined || !/^(-?\d+|'[^']*'|true|false)$/.test(stated)) return []
      if (!(name in source))
        return [`${page}:${line}: \`${name}\` states ${stated}, which no source in this test gives`]
      return stated === normalized(source[name])
        ? []
        : [`${page}:${line}: \`${name}\` says ${stated}, the source ${normalized(source[name])}`]
    })
    expect(wrong).toEqual([])
  })

  it('checks the tables that exist (the README, sending webhooks, durable delivery)', () => {
    expect(defaultRows('README.md').length).toBeGreaterThan(20)
    expect(defaultRows('docs/webhooks.md').length).toBeGreaterThan(8)
    expect(defaultRows('docs/durable-delivery.md').length).toBeGreaterThan(8)
  })
})

/** `n` with thousands separators, as the pages write numbers. */
const grouped = (n: number) => n.toLocaleString('en-US')

/** The sum of the client's default retry delays, at the jitter's mean and its lowest (-20%). */
const retryDelays = Array.from({ length: client.retry.limit }, (_, retry) =>
  Math.min(client.retry.baseDelay * 2 ** retry, client.retry.maxDelay),
).reduce((sum, delay) => sum + delay, 0)

/** Every measure the source gives, as the pages may write it. */
const FACTS = new Set<string>([
  `${grouped(MAX_MESSAGE_BYTES)} bytes`,
  `${MAX_MESSAGE_BYTES / 1000} KB`,
  `${grouped(MAX_BATCH_BYTES)} bytes`,
  `${MAX_BATCH_BYTES / 1000} KB`,
  `${grouped(MAX_DEFAULT_CONTEXT_BYTES)} bytes`,
  `${grouped(KEEPALIVE_BUDGET)} bytes`,
  `${(resolveClientOptions('k', { compression: 'gzip' }).compressFrom ?? 0) / 1024} KiB`,
  '64 KiB', // what browsers allow keepalive bodies in flight; KEEPALIVE_BUDGET keeps under it
  `${grouped(client.compressFrom ?? resolveClientOptions('k', { compression: 'gzip' }).compressFrom ?? 0)} bytes`,
  `${client.maxQueueBytes / 2 ** 20} MiB`,
  `${DISK_DEFAULTS.maxBytes / 2 ** 20} MiB`,
  `${DISK_DEFAULTS.segmentBytes / 2 ** 20} MiB`,
  `${grouped(DISK_DEFAULTS.syncInterval)} ms`,
  `${HEADER_BYTES} bytes`,
  `${client.highWaterBytes / 2 ** 20} MiB`,
  `${grouped(DEFAULT_CLOSE_TIMEOUT)} ms`,
  `${DEFAULT_CLOSE_TIMEOUT / 1000} s`,
  `${DEFAULT_CLOSE_TIMEOUT / 1000} seconds`,
  `${client.retry.baseDelay} ms`,
  `${client.retry.maxDelay / 1000} s`,
  `${client.timeout / 1000} s`,
  `${client.flushAfter / 1000} seconds`,
  `${client.retry.maxRetryAfter / 1000} s`,
  `${Math.round(retryDelays / 1000)} seconds`,
  `${Math.floor((retryDelays * 0.8) / 1000)} s`,
  `${webhook.timeoutMs / 1000} s`,
  `${(webhook.breaker?.coolDownMs ?? 0) / 1000} s`,
  `${(webhook.breaker?.windowMs ?? 0) / 1000} s`,
  `${(webhook.breaker?.windowMs ?? 0) / 2000} s`, // a dead receiver under steady load: half the window
  `${webhook.retryWindowMs / 3_600_000} hours`,
  `${queue.enqueueTimeout / 1000} s`,
  `${queue.dedupWindowMs / 3_600_000} hours`,
  `${worker.lockDuration / 1000} s`,
  `${grouped(REPLICA_WAIT_DEFAULT_MS)} ms`,
  `${MAX_WEBHOOKS} URLs`,
  `${LANE_WAIT_MS} ms`,
  `${RETURN_HORIZON_MS / 1000} s`,
  `${BREAKER_REFRESH_MS / 1000} s`,
  `${CLOSE_MARGIN_MS / 1000} s`,
  `${CLOCK_SKEW_WARNING_MS / 1000} s`,
  `${DEFAULT_IDLE_MS / 1000} s`,
  `${MAX_HEAD_BYTES / 1024} KiB`,
])

/** Measures on the pages that are not facts about the package, each with why. */
const NOT_FACTS: Record<string, string> = {
  'docs/cli.md: 10 s': "eventwire dev's header timeout and its rate window, the command's own constants",
  'docs/cli.md: 338 bytes': 'a sample line of output',
  'docs/destinations.md: 100 bytes': "the sizing rule's margin per kept event, from bench/README.md's measures",
  'docs/cli.md: 501,024 bytes': "eventwire dev's read cap for a gzip body: 500,000 bytes and a 1,024-byte margin",
  'docs/performance.md: 20 KB': "the size of a benchmark's large events",
  'docs/performance.md: 10 seconds': "a benchmark's duration",
  'docs/tracking-plans.md: 40 KB': 'an example of a message over the limit',
  'docs/webhooks.md: 15 s': 'the second retry of the default webhook schedule (5 s, then 10 s more)',
  'docs/webhooks.md: 10,235 s': 'the last retry before the 4-hour mark in the default webhook schedule',
  'docs/webhooks.md: 10 s': 'an example of a Retry-After wait',
  'docs/webhooks.md: 0 s': 'the first attempt of the default webhook schedule',
  'docs/durable-delivery.md: 2 s': "Redis's own window of writes at risk with appendfsync everysec, on a slow disk",
  'docs/durable-delivery.md: 1 s': "Redis's own window of writes at risk with appendfsync everysec",
  'docs/cli.md: 5.2 s': 'a sample line of output',
  'docs/client.md: 3 bytes': 'the UTF-8 size of U+FFFD, a fact of UTF-8',
  'docs/durable-delivery.md: 50 bytes':
    'a budget per remembered id: test/webhook/enqueue-status.test.ts checks that the hashes take less, bench/README.md measures all Redis takes',
}

describe('measures in the guides', () => {
  it.each(pages)('every measure %s states is a value the source gives, or is listed as not a fact', (page) => {
    const unknown = [
      ...text(page).matchAll(/(?<![\w.,-])(\d[\d,]*(?:\.\d+)?) ?(bytes|KB|KiB|MiB|ms|s|seconds|hours|URLs)\b/g),
    ]
      .map((match) => `${match[1]} ${match[2]}`)
      .filter((measure) => !FACTS.has(measure) && !(`${page}: ${measure}` in NOT_FACTS))
    expect([...new Set(unknown)]).toEqual([])
  })
})

describe('messages the guides quote', () => {
  it('quote the line a Node process prints when it exits with messages held, as the client words it', () => {
    const quoted = pages.flatMap((page) =>
      text(page)
        .split('\n')
        .filter((line) => line.includes('at exit w'))
        .map((line) => [page, line.trim()]),
    )
    expect(quoted.length).toBeGreaterThanOrEqual(2)
    for (const [page, line] of quoted) expect(line, page).toBe(lostAtExitLine(3))
  })
})

describe('docs/destinations.md', () => {
  const page = text('docs/destinations.md')
  it('says how soon a change reaches every process, and how often they look, as the source sets them', () => {
    expect(REGISTRY_FRESH_MS).toBe(1_000)
    expect(page).toContain('within a second, without a restart')
    expect(1_000 / REGISTRY_POLL_MS).toBe(4)
    expect(page).toContain('four times a second')
  })

  it("says a worker without URLs of its own gives each URL the share of a destination's most URLs", () => {
    expect(MAX_WEBHOOKS).toBe(5)
    expect(page).toContain('a fifth of its `concurrency`')
  })

  it('states how delivered ids are remembered, as the source sets them', () => {
    const durable = text('docs/durable-delivery.md')
    expect(SPANS_PER_WINDOW).toBe(4)
    expect(durable).toContain('The window is cut into four spans')
    expect(durable).toContain('at least `dedupWindowMs`, and at most a quarter more')
    expect(IDS_PER_SHARD).toBe(32)
    expect(durable).toContain('Each such hash holds about 32 ids')
    // A layout grows by two bits (four times the hashes) once its hashes hold twice their share.
    expect(SHARD_GROWTH).toBe(2)
    expect(durable).toContain('A burst takes four times as many hashes')
  })

  it('states the fairness window, the sweep and the expiry, as the source sets them', () => {
    expect(FAIR_WINDOW).toBe(200)
    expect(page).toContain('at most 200 events in the line the workers take from')
    expect(page).toContain('behind at most 200 events of each busy destination')
    expect(page).toContain('`<prefix>:<name>:fair:<id>` (at most 200)')
    expect(SWEEP_MS).toBe(5_000)
    expect(page).toContain('checks every 5 seconds for parked events')
    expect(page).toContain('`<prefix>:<name>:fair-swept` lives for 5 seconds')
    expect(ADMITTED_TTL_MS).toBe(3_600_000)
    expect(page).toContain('The set expires an hour after its last change')
    expect(text('docs/guarantees.md')).toContain('at most 200 events in the line the workers take from')
  })

  it('states how many TLS sessions the Node transport keeps, as the source sets it', () => {
    expect(MAX_TLS_SESSIONS).toBe(1_000)
    expect(text('docs/webhooks.md')).toContain('The\n  transport keeps the last session of up to 1,000 origins.')
  })

  it("states serve's port, limits and bounds as the source sets them", () => {
    const serve = text('docs/serve.md')
    expect(DEFAULT_SERVE_PORT).toBe(8080)
    expect(serve).toContain('8080 and 127.0.0.1 by default')
    expect([HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, MAX_HEADERS]).toEqual([10_000, 10_000, 100])
    expect(serve).toContain(
      'Requests time out after 10 s for their headers and 10 s in all; a request may carry at most 100 headers',
    )
    expect([MAX_WRITE_KEYS, MAX_SOURCE_DESTINATIONS]).toEqual([5, 100])
    expect(serve).toContain('one write key or up to 5 during a rotation, and up to 100 destination ids')
    expect(serve).toContain('32,000 bytes of JSON a message, 500,000 a body')
    expect([DEFAULT_RATE_LIMIT, DEFAULT_MAX_CONNECTIONS, DROPS_LOGGED_EVERY_MS]).toEqual([500, 1_000, 10_000])
    expect(serve).toContain('requests a second each source may send to one process: 500 by default')
    expect(serve).toContain('Each source may send 500 requests a second to a process by default')
    expect(serve).toContain('the default lets some 10,000 events a second through')
    expect(serve).toContain('connections one process holds open at once: 1000 by default')
    expect(serve).toContain('A process holds at most 1000 connections at once')
    expect(serve).toContain('`connections-full` is logged every 10 s at most')
    expect(REPEATS_WINDOW_MS).toBe(10_000)
    expect(serve).toContain('A warning or error the same as one logged in the last 10 s is counted')
  })

  it('states what workers keep for replay, for how long, and how a replay stores it, as the source sets them', () => {
    expect(KEEP_SENT_DEFAULTS).toEqual({ maxEntries: 1_000, maxAgeMs: 24 * 3_600_000 })
    expect(page).toContain('`keepSent: true` keeps the newest 1,000 delivered events of each destination for a day')
    expect(MAX_KEPT_PER_DESTINATION).toBe(100_000)
    expect(page).toContain('`maxEntries` goes up to 100,000')
    expect(KEEP_SENT_FLUSH_MS).toBe(100)
    expect(page).toContain('a tenth of a second after delivery')
    expect(MAX_UNWRITTEN_BODY_CHARS).toBe(16_000_000)
    expect(page).toContain('holds up to 16,000,000 characters of bodies')
    expect(REPLAY_PAGE).toBe(1_000)
    expect(page).toContain('a thousand at a time')
  })

  it("states the metrics' bound on destination values and its shared value, as the source sets them", () => {
    expect(MAX_DESTINATION_LABELS).toBe(100)
    expect(OTHER_DESTINATIONS).toBe('_other')
    const metricsPage = text('docs/metrics.md')
    expect(metricsPage).toContain('one instrumentation uses at most 100 distinct values')
    expect(metricsPage).toContain('share the value `_other`')
  })

  it("states the attempt log's bounds, its delay and what it holds while Redis is slow, as the source sets them", () => {
    expect(ATTEMPT_LOG_DEFAULTS).toEqual({ maxEntries: 200, maxAgeMs: 7 * 24 * 3_600_000 })
    expect(page).toContain('newest 200 attempts of each destination for 7 days by default')
    expect(ATTEMPT_LOG_FLUSH_MS).toBe(100)
    expect(page).toContain('a tenth of a second after they end')
    expect(MAX_UNWRITTEN_ATTEMPTS).toBe(10_000)
    expect(page).toContain('holds up to 10,000 entries')
    expect(MAX_ATTEMPTS_READ).toBe(10_000)
    expect(page).toContain('`limit` is 100 by default and 10,000 at most')
    expect(resolveAttemptsOptions({}).limit).toBe(100)
    expect(MAX_CAUSE_TEXT).toBe(200)
    expect(page).toContain('at most 200 characters')
  })

  it('states the default shares of the alerts, their hours under the default window, and that autoDisable is off', () => {
    expect(ALERT_DEFAULTS).toEqual({ shares: [0.25, 0.5, 0.75], autoDisable: false })
    expect(page).toContain('a quarter, a half and three quarters by default')
    expect(resolveWebhookSettings({ webhooks: [{ url: 'https://a.example/' }] }).retryWindowMs).toBe(4 * 3_600_000)
    expect(page).toContain('one, two and three hours of the default four')
    expect(page).toContain('**Automatic disabling is off by default.**')
    expect(text('docs/serve.md')).toContain(
      '`failing` when a URL has failed an event for a quarter, half and three quarters of the retry window',
    )
  })
})
