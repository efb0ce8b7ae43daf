// Type-level rules of the public API, checked by `npm run typecheck` (tsc), not run.
import { expectTypeOf } from 'vitest'
import {
  Client,
  type DeliveryError,
  type ErrorCode,
  type MessageOutcome,
  type MessageType,
  type Middleware,
  type TrackMessage,
} from '../src/index.js'
import { toWebhookPayload, WebhookDestination } from '../src/webhook/index.js'
import type { WebhookWorker } from '../src/webhook/bullmq/index.js'

declare const client: Client

client.track({ userId: 'u1', event: 'E' })
client.track({ anonymousId: 'a1', event: 'E', timestamp: new Date(), messageId: 'm' })
// @ts-expect-error: a track needs an event
client.track({ userId: 'u1' })
// @ts-expect-error: a call needs a userId or an anonymousId
client.identify({ traits: { plan: 'pro' } })
// @ts-expect-error: group needs a groupId
client.group({ userId: 'u1' })
// @ts-expect-error: alias needs a previousId
client.alias({ userId: 'u1' })
// @ts-expect-error: timestamps are Dates or strings
client.page({ userId: 'u1', timestamp: 1_700_000_000 })

const accepted: boolean = client.track({ userId: 'u1', event: 'E' }, (error) => {
  const code:
    | 'ERR_QUEUE_FULL'
    | 'ERR_REJECTED'
    | 'ERR_RETRIES_EXHAUSTED'
    | 'ERR_CLOSE_TIMEOUT'
    | 'ERR_PAGE_LEFT'
    | 'ERR_INVALID_RESPONSE'
    | undefined = error?.code
  void code
})
void accepted

client.on('error', (error) => {
  const typed: DeliveryError = error
  const code: ErrorCode = typed.code
  // @ts-expect-error: codes are a closed union
  const wrong: typeof typed.code = 'ERR_SOMETHING_ELSE'
  void code
  void wrong
})
// @ts-expect-error: unknown events are refused
client.on('delivered', () => {})

const message: TrackMessage = { userId: 'u1', event: 'E', properties: { nested: { ok: true } } }
void message

// exactOptionalPropertyTypes is on here, as in strict projects: options and optional fields take
// `undefined` (an unset environment variable) and mean the default.
new Client('k', { endpoint: process.env['EVENTWIRE_ENDPOINT'], flushAt: undefined, retry: { limit: undefined } })
void new Client('k').close({ timeout: undefined })
new WebhookDestination({
  webhooks: [{ url: 'https://hooks.example.com/in', headers: undefined }],
  sharedSecret: process.env['WEBHOOK_SECRET'],
})
client.track({
  userId: 'u1',
  event: 'E',
  messageId: process.env['MESSAGE_ID'],
  anonymousId: undefined,
  properties: undefined,
})
client.alias({ userId: 'u1', previousId: 'a1', context: undefined })

// Traits and properties: what JSON carries, in the shapes programs hold it in.
interface Address {
  city: string
}
interface Props {
  plan: string
  seats?: number
  tags: readonly string[]
  address: Address
  history: Address[]
}
interface Tree {
  name: string
  children: Tree[]
}
class Money {
  constructor(readonly cents: number) {}
  toJSON(): string {
    return (this.cents / 100).toFixed(2)
  }
}
declare const props: Props
declare const tree: Tree
declare const optional: { a?: string }
declare const unknownBag: Record<string, unknown>
client.track({ userId: 'u1', event: 'E', properties: props })
client.identify({ userId: 'u1', traits: tree })
client.group({ userId: 'u1', groupId: 'g1', traits: optional })
client.page({ userId: 'u1', properties: unknownBag })
client.screen({ userId: 'u1', properties: JSON.parse('{}') })
client.track({
  userId: 'u1',
  event: 'E',
  properties: {
    at: new Date(),
    price: new Money(500),
    none: null,
    gone: undefined,
    list: [1, 'two', { three: true }],
    fixed: ['a', 'b'] as const,
  },
  context: { ip: '203.0.113.9', device: { type: 'ios' } },
  integrations: { All: false, Mixpanel: true, Amplitude: { session_id: 1 } },
})

// Values JSON cannot carry are compile errors, at the property that holds them.
// @ts-expect-error: BigInt
client.track({ userId: 'u1', event: 'E', properties: { big: 1n } })
// @ts-expect-error: BigInt, nested in an interface value
client.identify({ userId: 'u1', traits: { ...props, address: { city: 'x', zip: 1n } } })
// @ts-expect-error: function
client.track({ userId: 'u1', event: 'E', properties: { callback: () => 1 } })
// @ts-expect-error: symbol
client.group({ userId: 'u1', groupId: 'g1', traits: { tag: Symbol('t') } })
// @ts-expect-error: undefined inside an array would become null
client.page({ userId: 'u1', properties: { list: [1, undefined] } })
// @ts-expect-error: a Map has no JSON form
client.track({ userId: 'u1', event: 'E', properties: { map: new Map<string, number>() } })
// @ts-expect-error: properties are an object, not an array
client.track({ userId: 'u1', event: 'E', properties: [1] })
// @ts-expect-error: context is checked too
client.track({ userId: 'u1', event: 'E', context: { big: 1n } })
// @ts-expect-error: and integrations
client.track({ userId: 'u1', event: 'E', integrations: { All: () => false } })
// @ts-expect-error: and the non-generic message types
const annotated: TrackMessage = { userId: 'u1', event: 'E', properties: { big: 1n } }
void annotated

// Webhook events take the same message shapes, with the same checks.
declare const destination: WebhookDestination
void destination.deliver({ type: 'identify', userId: 'u1', traits: props, messageId: process.env['MESSAGE_ID'] })
toWebhookPayload({ type: 'delete', userId: 'u1', timestamp: undefined })
// @ts-expect-error: a track needs an event
void destination.deliver({ type: 'track', userId: 'u1' })
// @ts-expect-error: BigInt
void destination.deliver({ type: 'track', userId: 'u1', event: 'E', properties: { big: 1n } })
// @ts-expect-error: function, in an interface-typed value
toWebhookPayload({ type: 'group', userId: 'u1', groupId: 'g1', traits: { ...props, seats: () => 1 } })

// A worker's events are what it emits: the delivery events the destination has too, no `skipped`
// (an event skipped by its integrations never reaches Redis).
declare const worker: WebhookWorker
worker.on('attempt', (notice) => notice.accepted satisfies boolean)
worker.on('delivered', (result) => result.urls satisfies readonly unknown[])
destination.on('skipped', (result) => result.status satisfies 'delivered' | 'failed' | 'skipped')
// @ts-expect-error: a worker never emits skipped
worker.on('skipped', () => {})

// Middleware: the message is a union on type, narrowed by checking it; returning null drops.
const typedMiddleware: Middleware = (message, call) => {
  expectTypeOf(call.type).toEqualTypeOf<MessageType>()
  expectTypeOf(message.messageId).toEqualTypeOf<string>()
  expectTypeOf(message.timestamp).toEqualTypeOf<string>()
  if (message.type === 'track') {
    expectTypeOf(message.event).toEqualTypeOf<string>()
    return { ...message, context: { ...message.context, requestId: 'r' } }
  }
  // @ts-expect-error: only a track has an event
  void message.event
  return message.type === 'alias' ? null : message
}
new Client('k', { middleware: [typedMiddleware] }).use(() => undefined)
// @ts-expect-error: a middleware returns a message, null or undefined
new Client('k').use(() => 42)
new Client('k').track({ userId: 'u1', event: 'E' }, (error, outcome) => {
  expectTypeOf(error).toEqualTypeOf<DeliveryError | undefined>()
  expectTypeOf(outcome).toEqualTypeOf<MessageOutcome>()
  expectTypeOf(outcome).toEqualTypeOf<'sent' | 'failed' | 'dropped'>()
})
