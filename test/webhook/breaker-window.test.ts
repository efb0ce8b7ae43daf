// A breaker opens for a dead receiver, not a busy one: a receiver that fails one request in twenty,
// whose failed retries come due together in runs, never opens it, in either engine; one that fails
// every request opens it at its `failures`-th failure, as a run of failures did.
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
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

const EVENTS = 2_000
const answer = (status: number): WebhookResponse => ({ ok: true, status, retryAfter: null })

/**
 * A busy receiver: every twentieth event is answered 503 twice before a 2xx. With one backoff for
 * every retry, the failed retries of a burst come due together, a run of a hundred failures.
 */
function busyReceiver(): { transport: WebhookTransport; requests: () => number } {
  const seen = new Map<string, number>()
  let requests = 0
  return {
    requests: () => requests,
    transport: {
      send: async (request) => {
        requests++
        const id = request.headers['webhook-id'] ?? ''
        const nth = seen.get(id) ?? 0
        seen.set(id, nth + 1)
        return Number(id.slice(1)) % 20 === 0 && nth < 2 ? answer(503) : answer(204)
      },
    },
  }
}

const settingsOf = (transport: WebhookTransport): WebhookSettings => ({
  webhooks: [{ url: 'https://hooks.example.com/in' }],
  transport,
  backoff: () => 200,
})

const event = (index: number) => ({ type: 'track' as const, userId: 'u1', event: 'E', messageId: `e${index}` })

describe('the default breaker', () => {
  it('stays closed in memory for a receiver failing one request in twenty, its failed retries in runs', async () => {
    const { transport, requests } = busyReceiver()
    const destination = new WebhookDestination(settingsOf(transport))
    open.push(destination)
    const changes: CircuitState[] = []
    destination.on('url-state', ({ circuit }) => changes.push(circuit))
    const results = await Promise.all(Array.from({ length: EVENTS }, (_, index) => destination.deliver(event(index))))
    expect(results.every((result) => result.status === 'delivered')).toBe(true)
    expect(changes).toEqual([])
    // Each failing event: two 503s and a 2xx.
    expect(requests()).toBe(EVENTS + (EVENTS / 20) * 2)
  })

  it.runIf(redis.available)(
    'stays closed on two BullMQ workers for the same receiver',
    { timeout: 60_000 },
    async () => {
      const { transport, requests } = busyReceiver()
      const connection = { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null }
      const name = 'breaker-window'
      const queue = new WebhookQueue({ connection, name })
      const workers = [0, 1].map(() => new WebhookWorker(settingsOf(transport), { connection, name, concurrency: 50 }))
      open.push(...workers, queue)
      await Promise.all(workers.map((worker) => worker.ready()))
      const changes: CircuitState[] = []
      let delivered = 0
      for (const worker of workers) {
        worker.on('url-state', ({ circuit }) => changes.push(circuit))
        worker.on('delivered', () => delivered++)
      }
      await queue.enqueueBulk(Array.from({ length: EVENTS }, (_, index) => event(index)))
      await expect.poll(() => delivered, { timeout: 50_000 }).toBe(EVENTS)
      expect(changes).toEqual([])
      expect(requests()).toBeGreaterThanOrEqual(EVENTS + (EVENTS / 20) * 2)
    },
  )

  it('opens at the tenth failure of a receiver that fails every request, as a run of ten did', async () => {
    let requests = 0
    const destination = new WebhookDestination({
      ...settingsOf({
        send: async () => {
          requests++
          return answer(503)
        },
      }),
      // One request at a time: the tenth answer is the tenth request.
      maxConcurrencyPerUrl: 1,
      backoff: () => 60_000,
    })
    open.push(destination)
    const opened = new Promise<number>((resolve) => destination.once('url-state', () => resolve(requests)))
    for (let index = 0; index < 20; index++) void destination.deliver(event(index))
    expect(await opened).toBe(10)
  })
})
