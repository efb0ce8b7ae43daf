import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebhookQueue } from '../../src/webhook/bullmq/index.js'
import type { ValidationErrorCode } from '../../src/core/errors/validation-error.js'
import { ValidationError, WebhookDestination } from '../../src/webhook/index.js'
import { startRedis, type RedisServer } from '../helpers/redis.js'
import { isInstalled, REDIS } from '../helpers/services.js'

// One table of invalid events, run against every engine's front door: the in-memory destination and
// the BullMQ queue must refuse the same events with the same error, so that they cannot disagree.

const circular: Record<string, unknown> = { plan: 'pro' }
circular['self'] = circular

const throwingGetter = {
  type: 'track',
  event: 'Paid',
  get userId(): string {
    throw new Error('getter exploded')
  },
}

const INVALID: Array<[name: string, event: unknown, code: ValidationErrorCode, field: string]> = [
  ['a circular property', { type: 'identify', userId: 'u1', traits: circular }, 'ERR_NOT_SERIALIZABLE', 'traits.self'],
  [
    'a BigInt property',
    { type: 'track', userId: 'u1', event: 'Paid', properties: { total: 10n } },
    'ERR_NOT_SERIALIZABLE',
    'properties.total',
  ],
  [
    'a NaN in context',
    { type: 'page', userId: 'u1', context: { score: Number.NaN } },
    'ERR_NOT_SERIALIZABLE',
    'context.score',
  ],
  [
    'Infinity deep in an array',
    { type: 'group', userId: 'u1', groupId: 'g', traits: { sizes: [1, Number.POSITIVE_INFINITY] } },
    'ERR_NOT_SERIALIZABLE',
    'traits.sizes[1]',
  ],
  [
    'a function property',
    { type: 'track', userId: 'u1', event: 'Paid', properties: { fn: () => 1 } },
    'ERR_NOT_SERIALIZABLE',
    'properties.fn',
  ],
  [
    'a Map as properties',
    { type: 'track', userId: 'u1', event: 'Paid', properties: new Map([['a', 1]]) },
    'ERR_NOT_SERIALIZABLE',
    'properties',
  ],
  [
    'a Map inside traits',
    { type: 'identify', userId: 'u1', traits: { seen: new Map() } },
    'ERR_NOT_SERIALIZABLE',
    'traits.seen',
  ],
  [
    'a toJSON that throws',
    {
      type: 'identify',
      userId: 'u1',
      traits: {
        money: {
          toJSON: () => {
            throw new Error('no')
          },
        },
      },
    },
    'ERR_NOT_SERIALIZABLE',
    'traits.money',
  ],
  [
    'a toJSON that returns a BigInt',
    { type: 'identify', userId: 'u1', traits: { money: { toJSON: () => 1n } } },
    'ERR_NOT_SERIALIZABLE',
    'traits.money',
  ],
  [
    'a toJSON that returns NaN',
    { type: 'identify', userId: 'u1', traits: { money: { toJSON: () => Number.NaN } } },
    'ERR_NOT_SERIALIZABLE',
    'traits.money',
  ],
  [
    'a toJSON that returns undefined',
    { type: 'identify', userId: 'u1', traits: { money: { toJSON: () => undefined } } },
    'ERR_NOT_SERIALIZABLE',
    'traits.money',
  ],
  ['a track without userId', { type: 'track', event: 'Paid' }, 'ERR_MISSING_USER_ID', 'userId'],
  ['an identify with only an anonymousId', { type: 'identify', anonymousId: 'a1' }, 'ERR_MISSING_USER_ID', 'userId'],
  ['a delete without userId', { type: 'delete' }, 'ERR_MISSING_USER_ID', 'userId'],
  ['an alias without previousId', { type: 'alias', userId: 'u1' }, 'ERR_MISSING_PREVIOUS_ID', 'previousId'],
  ['a track without event', { type: 'track', userId: 'u1' }, 'ERR_MISSING_EVENT', 'event'],
  ['a group without groupId', { type: 'group', userId: 'u1' }, 'ERR_MISSING_GROUP_ID', 'groupId'],
  ['a numeric userId', { type: 'identify', userId: 42 }, 'ERR_INVALID_FIELD', 'userId'],
  ['an array as properties', { type: 'page', userId: 'u1', properties: [1, 2] }, 'ERR_INVALID_FIELD', 'properties'],
  ['a string as context', { type: 'identify', userId: 'u1', context: 'web' }, 'ERR_INVALID_FIELD', 'context'],
  ['a numeric screen name', { type: 'screen', userId: 'u1', name: 7 }, 'ERR_INVALID_FIELD', 'name'],
  [
    'an unparseable timestamp',
    { type: 'identify', userId: 'u1', timestamp: 'yesterday' },
    'ERR_INVALID_FIELD',
    'timestamp',
  ],
  ['an unknown type', { type: 'purchase', userId: 'u1' }, 'ERR_INVALID_FIELD', 'type'],
  // The id travels as the Webhook-Id header: what a header cannot carry would fail every attempt.
  [
    'a messageId with CR/LF',
    { type: 'identify', userId: 'u1', messageId: 'm1\r\nX-Injected: 1' },
    'ERR_INVALID_FIELD',
    'messageId',
  ],
  [
    'a messageId beyond ASCII',
    { type: 'identify', userId: 'u1', messageId: 'commande-é' },
    'ERR_INVALID_FIELD',
    'messageId',
  ],
  ['a numeric messageId', { type: 'identify', userId: 'u1', messageId: 42 }, 'ERR_INVALID_FIELD', 'messageId'],
  [
    'a string as integrations',
    { type: 'identify', userId: 'u1', integrations: 'none' },
    'ERR_INVALID_FIELD',
    'integrations',
  ],
  ['null', null, 'ERR_INVALID_FIELD', 'event'],
  ['an array', [], 'ERR_INVALID_FIELD', 'event'],
  ['an event whose getter throws', throwingGetter, 'ERR_INVALID_FIELD', 'event'],
  // Checked before integrations are read: a skip does not hide a broken event.
  [
    'an invalid event that integrations would skip',
    { type: 'track', userId: 'u1', event: 'Paid', properties: { n: 1n }, integrations: { Webhooks: false } },
    'ERR_NOT_SERIALIZABLE',
    'properties.n',
  ],
]

async function expectRefused(attempt: Promise<unknown>, code: ValidationErrorCode, field: string): Promise<void> {
  const error = await attempt.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(ValidationError)
  expect(error).toMatchObject({ code, field })
  expect((error as Error).message).toContain(field === 'event' ? 'event' : field.split(/[.[]/)[0])
}

describe('the event rules, at WebhookDestination.deliver', () => {
  it.each(INVALID)(
    'refuses %s with a ValidationError naming the path, and sends nothing',
    async (_name, event, code, field) => {
      let sent = 0
      const destination = new WebhookDestination({
        webhooks: [{ url: 'http://127.0.0.1:9/' }],
        transport: {
          send: async () => {
            sent++
            return { ok: true, status: 200, retryAfter: null }
          },
        },
      })
      await expectRefused(destination.deliver(event as never), code, field)
      await destination.close()
      expect(sent).toBe(0)
    },
  )
})

const withRedis = isInstalled(REDIS.executable)
describe.runIf(withRedis)('the event rules, at WebhookQueue.enqueue (a real Redis)', () => {
  let redis: RedisServer
  let queue: WebhookQueue
  beforeAll(async () => {
    redis = await startRedis()
    queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.port }, name: 'event-rules' })
  })
  afterAll(async () => {
    await queue?.close()
    await redis?.dispose()
  })

  it.each(INVALID)(
    'refuses %s with a ValidationError naming the path, and stores nothing',
    async (_name, event, code, field) => {
      await expectRefused(queue.enqueue(event as never), code, field)
      expect(await queue.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 0, failed: 0 })
    },
  )
})
