// One table of answers, run against both engines (in memory, and a BullMQ worker on a real Redis):
// each answer gives the same breaker transitions, the same outcome or retry time, and a rate
// holds deliveries back the same way. The per-URL policy is one module (url-policy.ts); this
// catches the next time an engine decides something of its own.
import { afterEach, describe, expect, it } from 'vitest'
import { WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import {
  WebhookDestination,
  type CircuitState,
  type WebhookResponse,
  type WebhookSettings,
  type WebhookTransport,
} from '../../src/webhook/index.js'
import { redisForFile } from '../helpers/redis-suite.js'

const redis = redisForFile()
const URL = 'https://hooks.example.com/in'
const BACKOFF_MS = 1_000
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

const status = (code: number, retryAfter: string | null = null): WebhookResponse => ({
  ok: true,
  status: code,
  retryAfter,
})
const failure = (kind: 'timeout' | 'network' | 'tls' | 'blocked', code: string): WebhookResponse => ({
  ok: false,
  failure: kind,
  cause: Object.assign(new Error(code), { code }),
})

/** What an engine did with three events a URL answered alike. */
interface Observed {
  /** The breaker's transitions. */
  readonly circuit: CircuitState[]
  /** The first event: delivered, failed with a code, or retried after so many ms (rounded to 100). */
  readonly first: string
}

/** One row: how the transport answers (or throws), and what both engines must make of it. */
type Row = readonly [name: string, answer: WebhookResponse | 'throws', expected: Observed]

const TABLE: Row[] = [
  ['a 2xx', status(204), { circuit: [], first: 'delivered' }],
  ['a 4xx', status(404), { circuit: [], first: 'failed ERR_HTTP_STATUS' }],
  ['a 429 with Retry-After', status(429, '2'), { circuit: [], first: 'retry in 2000' }],
  ['a 5xx', status(503), { circuit: ['open'], first: `retry in ${BACKOFF_MS}` }],
  ['a timeout', failure('timeout', 'ETIMEDOUT'), { circuit: ['open'], first: `retry in ${BACKOFF_MS}` }],
  ['a refused connection', failure('network', 'ECONNREFUSED'), { circuit: ['open'], first: `retry in ${BACKOFF_MS}` }],
  [
    'an untrusted certificate',
    failure('tls', 'CERT_HAS_EXPIRED'),
    { circuit: ['open'], first: 'failed ERR_TLS_CERTIFICATE' },
  ],
  [
    'a blocked target',
    failure('blocked', 'ERR_EVENTWIRE_BLOCKED_ADDRESS'),
    { circuit: [], first: 'failed ERR_BLOCKED_TARGET' },
  ],
  [
    'a protocol error',
    failure('network', 'ERR_EVENTWIRE_HTTP_PROTOCOL'),
    { circuit: ['open'], first: `retry in ${BACKOFF_MS}` },
  ],
  ['a transport that throws', 'throws', { circuit: ['open'], first: `retry in ${BACKOFF_MS}` }],
]

/** A transport that answers every request the same way, or throws; it records when each request came. */
function transportOf(answer: WebhookResponse | 'throws', sent: number[] = []): WebhookTransport {
  return {
    send: async () => {
      sent.push(Date.now())
      if (answer === 'throws') throw new Error('the transport broke')
      return answer
    },
  }
}

function settingsOf(transport: WebhookTransport, extra: Partial<WebhookSettings> = {}): WebhookSettings {
  return {
    webhooks: [{ url: URL }],
    transport,
    backoff: () => BACKOFF_MS,
    retryWindowMs: 60_000,
    breaker: { failures: 2, coolDownMs: 60_000 },
    ...extra,
  }
}

/** What one engine is, for the table: it takes events and tells the notices every engine tells. */
interface Engine {
  readonly name: string
  readonly available: boolean
  start(settings: WebhookSettings): Promise<{
    on: WebhookDestination['on']
    deliver(id: string): void
  }>
}

let queues = 0
const ENGINES: Engine[] = [
  {
    name: 'in memory',
    available: true,
    async start(settings) {
      const destination = new WebhookDestination(settings)
      open.push(destination)
      return {
        on: destination.on.bind(destination),
        deliver: (id) => void destination.deliver({ type: 'track', userId: 'u1', event: 'E', messageId: id }),
      }
    },
  },
  {
    name: 'on BullMQ',
    available: redis.available,
    async start(settings) {
      const connection = { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null }
      const name = `policy-table-${++queues}`
      const queue = new WebhookQueue({ connection, name })
      const worker = new WebhookWorker(settings, { connection, name, concurrency: 10 })
      open.push(worker, queue)
      await worker.ready()
      return {
        on: worker.on.bind(worker) as unknown as WebhookDestination['on'],
        deliver: (id) => void queue.enqueue({ type: 'track', userId: 'u1', event: 'E', messageId: id }),
      }
    },
  },
]

/** Three events to a URL that answers each request alike: what the engine makes of them. */
async function observe(engine: Engine, answer: WebhookResponse | 'throws'): Promise<Observed> {
  const run = await engine.start(settingsOf(transportOf(answer)))
  const circuit: CircuitState[] = []
  let first: string | undefined
  let attemptedAt = 0
  run.on('url-state', ({ circuit: state }) => circuit.push(state))
  run.on('attempt', (notice) => {
    if (notice.eventId === 'e1') attemptedAt = Date.now()
  })
  run.on('retry', (notice) => {
    if (notice.eventId === 'e1') first ??= `retry in ${Math.round((notice.retryAt - attemptedAt) / 100) * 100}`
  })
  run.on('delivered', (result) => {
    if (result.eventId === 'e1') first ??= 'delivered'
  })
  run.on('failed', (result) => {
    if (result.eventId === 'e1') first ??= `failed ${result.urls[0]?.lastError?.code}`
  })
  let answered = 0
  run.on('attempt', () => answered++)
  for (const id of ['e1', 'e2', 'e3']) run.deliver(id)
  await expect.poll(() => answered >= 3 && first !== undefined, { timeout: 10_000 }).toBe(true)
  return { circuit, first: first as string }
}

describe.each(ENGINES)('the per-URL policy $name', (engine) => {
  it.runIf(engine.available).each(TABLE)('%s', async (_, answer, expected) => {
    expect(await observe(engine, answer)).toEqual(expected)
  })

  it.runIf(engine.available)('holds deliveries to a URL over its rate, and lets them go at the rate', async () => {
    const sent: number[] = []
    const run = await engine.start(settingsOf(transportOf(status(200), sent), { ratePerUrl: 2 }))
    let delivered = 0
    run.on('delivered', () => delivered++)
    for (const id of ['r1', 'r2', 'r3', 'r4']) run.deliver(id)
    await expect.poll(() => delivered, { timeout: 10_000 }).toBe(4)
    // A burst of one second's worth (2), then one every 500 ms.
    const spans = sent.map((at) => at - (sent[0] as number))
    expect(spans[1]).toBeLessThan(400)
    expect(spans[2]).toBeGreaterThanOrEqual(300)
    expect(spans[3]).toBeGreaterThanOrEqual(800)
  })
})
