// Type-level rules of tracking plans, checked by `npm run typecheck` (tsc), not run.
import { type } from 'arktype'
import * as v from 'valibot'
import { expectTypeOf } from 'vitest'
import { z } from 'zod'
import { Client, definePlan, type NoPlan, type TrackMessage } from '../src/index.js'

/** A plan as types only: the compiler checks the calls, nothing runs. */
interface Shop {
  events: {
    'Order Completed': { orderId: string; total: number; coupon?: string }
    'Signed Up': { referrer?: string }
  }
  traits: { email: string; plan?: 'free' | 'pro' }
  groupTraits: { seats: number }
}
declare const shop: Client<Shop>

// Known names with their exact properties; optional properties may be left out, and so may
// `properties` itself when every property is optional.
shop.track({ userId: 'u1', event: 'Order Completed', properties: { orderId: 'o1', total: 42 } })
shop.track({ userId: 'u1', event: 'Order Completed', properties: { orderId: 'o1', total: 42, coupon: 'X' } })
shop.track({ anonymousId: 'a1', event: 'Signed Up' })
shop.track({ userId: 'u1', event: 'Signed Up', properties: { referrer: 'ad' }, messageId: 'm', timestamp: new Date() })
// @ts-expect-error: a name the plan does not have ("Did you mean 'Order Completed'?")
shop.track({ userId: 'u1', event: 'Order Complete', properties: { orderId: 'o1', total: 42 } })
// @ts-expect-error: a property of the wrong type
shop.track({ userId: 'u1', event: 'Order Completed', properties: { orderId: 'o1', total: '42' } })
// @ts-expect-error: a missing required property
shop.track({ userId: 'u1', event: 'Order Completed', properties: { orderId: 'o1' } })
// @ts-expect-error: properties left out while some are required
shop.track({ userId: 'u1', event: 'Order Completed' })
// @ts-expect-error: an extra property
shop.track({ userId: 'u1', event: 'Order Completed', properties: { orderId: 'o1', total: 42, extra: 1 } })
// @ts-expect-error: a planned call still needs a userId or an anonymousId
shop.track({ event: 'Signed Up' })

shop.identify({ userId: 'u1', traits: { email: 'a@example.com' } })
// @ts-expect-error: a trait the plan does not have ("Did you mean to write 'email'?")
shop.identify({ userId: 'u1', traits: { mail: 'a@example.com' } })
// @ts-expect-error: a trait of the wrong type
shop.identify({ userId: 'u1', traits: { email: 'a@example.com', plan: 'gold' } })
shop.group({ userId: 'u1', groupId: 'g1', traits: { seats: 5 } })
// @ts-expect-error: group traits are checked too
shop.group({ userId: 'u1', groupId: 'g1', traits: { seats: '5' } })
// Types outside the plan are as ever.
shop.page({ userId: 'u1', name: 'Home', properties: { anything: true } })

// A client without a plan types exactly as before.
declare const plain: Client
expectTypeOf(plain).toEqualTypeOf<Client<NoPlan>>()
plain.track({ userId: 'u1', event: 'anything at all', properties: { any: 'thing' } })
interface Props {
  sku: string
}
const props: Props = { sku: 'a' }
plain.track({ userId: 'u1', event: 'E', properties: props })
const message: TrackMessage = { userId: 'u1', event: 'E' }
plain.track(message)

// A plan of schemas types the calls by each schema's input, in every library.
const zod = new Client('k', {
  plan: definePlan({
    events: { 'Order Completed': z.object({ total: z.number(), currency: z.string().default('EUR') }) },
    traits: z.object({ email: z.email() }),
  }),
})
zod.track({ userId: 'u1', event: 'Order Completed', properties: { total: 1 } }) // currency has a default
// @ts-expect-error: the schema's input type
zod.track({ userId: 'u1', event: 'Order Completed', properties: { total: '1' } })
// @ts-expect-error: traits are the schema's input type
zod.identify({ userId: 'u1', traits: { email: 1 } })

const valibot = new Client('k', { plan: definePlan({ events: { Paid: v.object({ total: v.number() }) } }) })
valibot.track({ userId: 'u1', event: 'Paid', properties: { total: 1 } })
// @ts-expect-error: an event the plan does not have
valibot.track({ userId: 'u1', event: 'Refunded', properties: { total: 1 } })

const ark = new Client('k', { plan: definePlan({ events: { Paid: type({ total: 'number' }) } }) })
ark.track({ userId: 'u1', event: 'Paid', properties: { total: 1 } })
// @ts-expect-error: the schema's input type
ark.track({ userId: 'u1', event: 'Paid', properties: { total: 'x' } })

// Receivers get the payload typed by the plan: a union on `type`, and for track on `event`.
import { verifyWebhook, WebhookDestination } from '../src/webhook/index.js'
import type { EnqueueResult, WebhookQueue } from '../src/webhook/bullmq/index.js'

const receiverPlan = definePlan({
  events: { 'Order Completed': z.object({ total: z.number(), currency: z.string().default('EUR') }) },
  traits: z.object({ email: z.string() }),
})
declare const request: Request
const verified = await verifyWebhook(request, { secrets: 's', plan: receiverPlan })
if (verified.ok) {
  const { payload } = verified
  if (payload.type === 'track') {
    expectTypeOf(payload.event).toEqualTypeOf<'Order Completed'>()
    // The schema's output: the default makes currency a string, never undefined.
    expectTypeOf(payload.properties).toEqualTypeOf<{ total: number; currency: string }>()
  }
  if (payload.type === 'identify') expectTypeOf(payload.traits).toEqualTypeOf<{ email: string }>()
} else {
  expectTypeOf(verified.reason).toEqualTypeOf<
    | 'missing_header'
    | 'malformed_header'
    | 'bad_signature'
    | 'timestamp_too_old'
    | 'timestamp_too_new'
    | 'malformed'
    | 'plan_violation'
  >()
}

const planned = new WebhookDestination({ webhooks: [{ url: 'https://hooks.example.com' }], plan: receiverPlan })
void planned.deliver({ type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 1 } })
// @ts-expect-error: a planned destination takes only the plan's events
void planned.deliver({ type: 'track', userId: 'u1', event: 'Order Refunded' })
void planned.deliver({ type: 'alias', previousId: 'a1', userId: 'u1' })

// A planned queue types enqueue() and enqueueBulk() alike: every event of the array by the plan.
declare const plannedQueue: WebhookQueue<typeof receiverPlan>
void plannedQueue.enqueue({ type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 1 } })
expectTypeOf(
  await plannedQueue.enqueueBulk([
    { type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 1 } },
    { type: 'alias', previousId: 'a1', userId: 'u1' },
  ]),
).toEqualTypeOf<EnqueueResult[]>()
void plannedQueue.enqueueBulk([
  { type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 1 } },
  // @ts-expect-error: a planned queue takes only the plan's events, in an array too
  { type: 'track', userId: 'u1', event: 'Order Refunded' },
])
expectTypeOf<EnqueueResult['status']>().toEqualTypeOf<'queued' | 'skipped' | 'duplicate' | 'dead-letter' | 'disabled'>()

// `plan: undefined` is a client without a plan (exactOptionalPropertyTypes allows the undefined).
const noPlanGiven: Client = new Client('k', { flushAt: 1, plan: undefined })
void noPlanGiven

// A plan with traits only leaves track payloads as they are (not typed away).
const traitsOnly = definePlan({ traits: z.object({ email: z.string() }) })
const fromTraitsOnly = await verifyWebhook(request, { secrets: 's', plan: traitsOnly })
if (fromTraitsOnly.ok && fromTraitsOnly.payload.type === 'track') void fromTraitsOnly.payload['event']
// An event whose schema is optional or defaulted may leave its properties out.
const optional = new Client('k', {
  plan: definePlan({ events: { Viewed: z.object({ page: z.string() }).optional() } }),
})
optional.track({ userId: 'u1', event: 'Viewed' })

// Middleware under a plan: the planned fields are the schemas' outputs, and what it returns must keep them.
const middlewarePlan = definePlan({
  events: { 'Order Completed': z.object({ total: z.number(), currency: z.string().default('EUR') }) },
  traits: z.object({ email: z.string() }),
})
const plannedClient = new Client('k', {
  plan: middlewarePlan,
  middleware: [
    (message) => {
      if (message.type === 'track') {
        expectTypeOf(message.event).toEqualTypeOf<'Order Completed'>()
        expectTypeOf(message.properties).toEqualTypeOf<{ total: number; currency: string } | undefined>()
      }
      if (message.type === 'identify') expectTypeOf(message.traits).toEqualTypeOf<{ email: string } | undefined>()
      return message
    },
  ],
})
plannedClient.use((message) => (message.type === 'identify' ? { ...message, traits: { email: 'x' } } : message))
plannedClient.use((message) =>
  // @ts-expect-error: a middleware cannot make a planned property the wrong type
  message.type === 'track' ? { ...message, properties: { total: 'x', currency: 'EUR' } } : message,
)
