// Staged alerts: a URL that keeps failing is told about at shares of the retry window, when an
// event's window runs out there, and when it takes an event again; each once for the whole fleet,
// with the registry's destination switched off when autoDisable asks and all its URLs gave up.
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { OptionsError } from '../../src/index.js'
import { ALERT_DEFAULTS, resolveAlerts, type DeliveryAlert } from '../../src/webhook/bullmq/delivery-alerts.js'
import { WebhookQueue, WebhookWorker, type FailingAlert, type GivenUpAlert } from '../../src/webhook/bullmq/index.js'
import { ended } from '../helpers/ended.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Sink } from '../helpers/sink.js'

const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

const event = (id: string) => ({ type: 'track' as const, userId: 'u1', event: 'Paid', messageId: id })
let queues = 0

describe('the alerts option', () => {
  it('takes shares of the retry window and autoDisable, false for none, and refuses what it cannot use by name', () => {
    expect(resolveAlerts(undefined)).toEqual(ALERT_DEFAULTS)
    expect(ALERT_DEFAULTS).toEqual({ shares: [0.25, 0.5, 0.75], autoDisable: false })
    expect(resolveAlerts(false)).toBeUndefined()
    expect(resolveAlerts({ shares: [0.9], autoDisable: true })).toEqual({ shares: [0.9], autoDisable: true })
    for (const shares of [[], [0], [1], [0.5, 0.5], [0.6, 0.5], ['0.5'], 0.5, '0.25', Array(11).fill(0.5)])
      expect(() => resolveAlerts({ shares }), JSON.stringify(shares)).toThrow(/alerts\.shares.*increasing order/)
    expect(() => resolveAlerts({ autoDisable: 'yes' })).toThrow(/alerts\.autoDisable/)
    expect(() => resolveAlerts({ stages: [0.5] })).toThrow(/alerts\.stages.*shares/)
    expect(() => resolveAlerts(true)).toThrow(OptionsError)
  })
})

describe.runIf(redis.available)('staged alerts', () => {
  const connection = () => ({ host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null })
  async function sink(respond?: Parameters<typeof startSink>[0]): Promise<Sink> {
    const started = await startSink(respond)
    open.push(started)
    return started
  }
  /** A queue of its own, and `workers` workers on it without URLs of their own, their alerts gathered. */
  async function fleet(options: { workers?: number; retryWindowMs: number; alerts?: object | false }) {
    const name = `alerts-${queues++}`
    const queue = new WebhookQueue({ connection: connection(), name })
    const alerts: DeliveryAlert[] = []
    const workers = Array.from({ length: options.workers ?? 1 }, () => {
      const worker = new WebhookWorker(
        // No breaker: every round sends, so each retry is a failure of its own.
        { backoff: () => 50, retryWindowMs: options.retryWindowMs, breaker: false },
        {
          connection: connection(),
          name,
          concurrency: 10,
          ...(options.alerts === undefined ? {} : { alerts: options.alerts }),
        },
      )
      worker.on('alert', (alert) => alerts.push(alert))
      open.push(worker)
      return worker
    })
    open.push(queue)
    await Promise.all([queue.ready(), ...workers.map((worker) => worker.ready())])
    return { queue, workers, alerts, name }
  }

  it('tells each share of the window once across two workers, then the window run out, then the URL back', async () => {
    let healthy = false
    const receiver = await sink(() => ({ status: healthy ? 200 : 503 }))
    const url = new URL(receiver.url).href
    const { queue, workers, alerts } = await fleet({ workers: 2, retryWindowMs: 4_000 })
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: receiver.url }] })
    const bothEnded = new Promise<void>((resolve) => {
      let count = 0
      for (const worker of workers) worker.on('failed', () => ++count === 3 && resolve())
    })
    for (const id of ['e1', 'e2', 'e3']) await queue.enqueue(event(id), { destination: 'acme' })
    await bothEnded
    const kinds = alerts.map((alert) => [alert.kind, alert.kind === 'failing' ? alert.share : undefined])
    expect(kinds).toEqual([
      ['failing', 0.25],
      ['failing', 0.5],
      ['failing', 0.75],
      ['given-up', undefined],
    ])
    const told = alerts as Array<FailingAlert | GivenUpAlert>
    for (const alert of told) {
      expect(alert).toMatchObject({ destination: 'acme', url })
      expect(alert.error?.code).toBe('ERR_HTTP_STATUS')
      expect(alert.error?.status).toBe(503)
    }
    // A quarter of the window, and all of it; rounds every 50 ms leave no share unseen.
    expect(told[0]?.failingForMs).toBeGreaterThanOrEqual(1_000)
    expect(told[3]?.failingForMs).toBeGreaterThanOrEqual(4_000)

    // The receiver recovers: the next event is taken at once, and the URL is told back, once.
    healthy = true
    const delivered = new Promise<void>((resolve) => {
      for (const worker of workers) worker.once('delivered', () => resolve())
    })
    await queue.enqueue(event('e4'), { destination: 'acme' })
    await delivered
    await Promise.all(workers.map((worker) => worker.close()))
    expect(alerts.slice(4)).toEqual([{ kind: 'back', destination: 'acme', url }])
  })

  it('disables a destination once every URL of it gave up, with autoDisable, and says so', async () => {
    const down = await sink(() => ({ status: 503 }))
    const alsoDown = await sink(() => ({ status: 500 }))
    const { queue, workers, alerts, name } = await fleet({
      retryWindowMs: 1_000,
      alerts: { shares: [0.5], autoDisable: true },
    })
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: down.url }, { url: alsoDown.url }] })
    const done = ended(workers[0] as WebhookWorker, 1)
    await queue.enqueue(event('e1'), { destination: 'acme' })
    await done
    await (workers[0] as WebhookWorker).close()
    expect(alerts.map((alert) => alert.kind).sort()).toEqual(['disabled', 'failing', 'failing', 'given-up', 'given-up'])
    expect(alerts.at(-1)).toEqual({ kind: 'disabled', destination: 'acme' })
    expect((await queue.destinations.get('acme'))?.enabled).toBe(false)
    // A producer that reads the registry now (this one may route by what it read up to a second ago).
    const producer = new WebhookQueue({ connection: connection(), name })
    open.push(producer)
    expect(await producer.enqueue(event('e2'), { destination: 'acme' })).toMatchObject({ status: 'disabled' })
  })

  it('leaves a destination enabled without autoDisable, and tells nothing of an event a URL refused with a 400', async () => {
    const refusing = await sink(() => ({ status: 400 }))
    const down = await sink(() => ({ status: 503 }))
    const { queue, workers, alerts } = await fleet({ retryWindowMs: 1_000 })
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: refusing.url }] })
    await queue.destinations.set({ id: 'beta', webhooks: [{ url: down.url }] })
    const done = ended(workers[0] as WebhookWorker, 2)
    await queue.enqueue(event('e1'), { destination: 'acme' })
    await queue.enqueue(event('e2'), { destination: 'beta' })
    await done
    await (workers[0] as WebhookWorker).close()
    expect(alerts.every((alert) => alert.destination === 'beta')).toBe(true)
    expect(alerts.map((alert) => alert.kind)).toEqual(['failing', 'failing', 'failing', 'given-up'])
    expect((await queue.destinations.get('beta'))?.enabled).toBe(true)
  })

  it('reads a stage that something else wrote into Redis as none, and raises over it', async () => {
    const down = await sink(() => ({ status: 503 }))
    const { queue, workers, alerts, name } = await fleet({ retryWindowMs: 1_000, alerts: { shares: [0.5] } })
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: down.url }] })
    const client = new Redis(connection())
    open.push({ close: async () => client.disconnect() })
    await client.hset(`bull:${name}:alerts:acme`, new URL(down.url).href, 'not a stage')
    const done = ended(workers[0] as WebhookWorker, 1)
    await queue.enqueue(event('e1'), { destination: 'acme' })
    await done
    await (workers[0] as WebhookWorker).close()
    expect(alerts.map((alert) => alert.kind)).toEqual(['failing', 'given-up'])
  })

  it('tells nothing with alerts: false', async () => {
    const down = await sink(() => ({ status: 503 }))
    const { queue, workers, alerts } = await fleet({ retryWindowMs: 1_000, alerts: false })
    await queue.destinations.set({ id: 'acme', webhooks: [{ url: down.url }] })
    const done = ended(workers[0] as WebhookWorker, 1)
    await queue.enqueue(event('e1'), { destination: 'acme' })
    await done
    expect(alerts).toEqual([])
  })
})
