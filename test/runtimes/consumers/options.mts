// A strict ESM project: optional settings from the environment (string | undefined) go straight
// in, and every entry point type-checks.
import { Client, type ClientOptions, type DeliveryError } from 'eventwire'
import { verifySignature, WebhookDestination, type DeliveryResult } from 'eventwire/webhook'
import { createHttp1Transport } from 'eventwire/webhook/node'
import { WebhookQueue, WebhookWorker } from 'eventwire/webhook/bullmq'
import { instrumentWebhooks, type WebhookInstrumentation } from 'eventwire/webhook/otel'

const options: ClientOptions = {
  endpoint: process.env['ANALYTICS_ENDPOINT'],
  flushAt: undefined,
  verbose: process.env['VERBOSE'] === '1',
}
const client = new Client('k', options)
client.on(
  'error',
  (error: DeliveryError) =>
    error.code satisfies
      | 'ERR_REJECTED'
      | 'ERR_RETRIES_EXHAUSTED'
      | 'ERR_QUEUE_FULL'
      | 'ERR_CLOSE_TIMEOUT'
      | 'ERR_PAGE_LEFT'
      | 'ERR_INVALID_RESPONSE',
)

interface SignUp {
  plan: string
  seats?: number
  tags: readonly string[]
  at: Date
}
const properties: SignUp = { plan: 'pro', tags: ['a'], at: new Date() }
const accepted: boolean = client.track({
  userId: process.env['USER_ID'] ?? 'u1',
  anonymousId: undefined,
  event: 'Signed Up',
  properties,
})
client.page({ anonymousId: 'a1', name: undefined, properties: { nested: { list: [1, 'two', null, { deep: true }] } } })

const ok: Promise<boolean> = verifySignature('{}', 'ab', 's')
const destination = new WebhookDestination({
  webhooks: [{ url: 'https://x.test' }],
  sharedSecret: process.env['WEBHOOK_SECRET'],
  transport: createHttp1Transport({ tls: { ca: process.env['CA'] } }),
})
const result: Promise<DeliveryResult> = destination.deliver({ type: 'identify', userId: 'u', traits: { plan: 'pro' } })
const queue = (host: string) => new WebhookQueue({ connection: { host, port: 6379 } })
// Each engine and the queue is something instrumentWebhooks takes; optional options may be undefined.
const measured: WebhookInstrumentation[] = [
  instrumentWebhooks(destination, { urlLabel: undefined, countsTimeout: undefined }),
  instrumentWebhooks(new WebhookWorker({ webhooks: [{ url: 'https://x.test' }] }, { connection: {} })),
  instrumentWebhooks(queue('127.0.0.1'), { attributes: { 'service.instance.id': process.env['HOSTNAME'] ?? 'a' } }),
]

export { accepted, measured, ok, queue, result }
