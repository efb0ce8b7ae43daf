// WebhookQueue and WebhookWorker check their options as WebhookDestination checks its settings: at
// construction, before any connection, each refusal an OptionsError naming the option.
import { Cluster, Redis } from 'ioredis'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { OptionsError } from '../../src/core/errors/options-error.js'
import { MAX_TIMER_MS } from '../../src/core/timers.js'
import { WebhookQueue } from '../../src/webhook/bullmq/queue.js'
import type { WebhookQueueOptions } from '../../src/webhook/bullmq/queue-options.js'
import {
  DEFAULT_QUEUE_NAME,
  resolveQueueOptions,
  resolveWorkerOptions,
  type WORKER_OPTION_NAMES,
} from '../../src/webhook/bullmq/options.js'
import { WebhookWorker, type WebhookWorkerOptions } from '../../src/webhook/bullmq/worker.js'

const connection = { host: '127.0.0.1', port: 6379 }
const settings = { webhooks: [{ url: 'https://hooks.example.com/in' }] }

/** The option a constructor refuses: it throws before it connects, so no Redis is needed. */
function refusedBy(construct: () => { close(): Promise<void> }): string {
  try {
    // Taken after all: close it at once, and fail below.
    void construct().close()
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError)
    expect((error as OptionsError).code).toBe('ERR_INVALID_OPTION')
    return (error as OptionsError).option
  }
  throw new Error('the options were taken')
}

const queueRefuses = (options: unknown) => refusedBy(() => new WebhookQueue(options as WebhookQueueOptions))
const workerRefuses = (options: unknown) =>
  refusedBy(() => new WebhookWorker(settings, options as WebhookWorkerOptions))

/** Refused by both classes: where a queue is and what Redis must keep. */
const refusedByBoth: Array<[string, unknown, string]> = [
  ['no options', undefined, 'options'],
  ['null options', null, 'options'],
  ['an array of options', [connection], 'options'],
  ['an option it does not know (queueName for name)', { connection, queueName: 'q' }, 'queueName'],
  ['no connection', {}, 'connection'],
  ['a null connection', { connection: null }, 'connection'],
  ['a connection URL string', { connection: 'redis://127.0.0.1:6379' }, 'connection'],
  ['a null name', { connection, name: null }, 'name'],
  ['an empty name', { connection, name: '' }, 'name'],
  ['a name that is not a string', { connection, name: 42 }, 'name'],
  ["a name with BullMQ's key separator", { connection, name: 'webhooks:eu' }, 'name'],
  ['a null prefix', { connection, prefix: null }, 'prefix'],
  ['an empty prefix', { connection, prefix: '' }, 'prefix'],
  ['a prefix that is not a string', { connection, prefix: 7 }, 'prefix'],
  ['a durability it does not know', { connection, durability: 'lax' }, 'durability'],
  ['a null durability', { connection, durability: null }, 'durability'],
]

describe('WebhookQueue options', () => {
  it.each([
    ...refusedByBoth,
    ['a worker option', { connection, concurrency: 10 }, 'concurrency'],
    ['a negative enqueueTimeout', { connection, enqueueTimeout: -1 }, 'enqueueTimeout'],
    ['a NaN enqueueTimeout', { connection, enqueueTimeout: Number.NaN }, 'enqueueTimeout'],
    ['an enqueueTimeout as a string', { connection, enqueueTimeout: '10000' }, 'enqueueTimeout'],
    ['a null enqueueTimeout', { connection, enqueueTimeout: null }, 'enqueueTimeout'],
    ['a negative dedupWindowMs', { connection, dedupWindowMs: -1 }, 'dedupWindowMs'],
    ['a fractional dedupWindowMs', { connection, dedupWindowMs: 1.5 }, 'dedupWindowMs'],
    ['an infinite dedupWindowMs', { connection, dedupWindowMs: Number.POSITIVE_INFINITY }, 'dedupWindowMs'],
    ['waitForReplicas as a number', { connection, waitForReplicas: 1 }, 'waitForReplicas'],
    ['waitForReplicas without a count', { connection, waitForReplicas: {} }, 'waitForReplicas.count'],
    ['a waitForReplicas count of 0', { connection, waitForReplicas: { count: 0 } }, 'waitForReplicas.count'],
    ['a fractional waitForReplicas count', { connection, waitForReplicas: { count: 1.5 } }, 'waitForReplicas.count'],
    [
      'a waitForReplicas timeoutMs of 0',
      { connection, waitForReplicas: { count: 1, timeoutMs: 0 } },
      'waitForReplicas.timeoutMs',
    ],
    [
      'a waitForReplicas timeoutMs as long as enqueueTimeout',
      { connection, enqueueTimeout: 2_000, waitForReplicas: { count: 1, timeoutMs: 2_000 } },
      'waitForReplicas.timeoutMs',
    ],
    [
      'a waitForReplicas option it does not know',
      { connection, waitForReplicas: { count: 1, ms: 5 } },
      'waitForReplicas.ms',
    ],
  ])('refuses %s', (_case, options, option) => {
    expect(queueRefuses(options)).toBe(option)
  })

  it('waits 1,000 ms for the replicas unless told, and says why a timeoutMs must stay under enqueueTimeout', () => {
    expect(resolveQueueOptions({ connection, waitForReplicas: { count: 2 } }).waitForReplicas).toEqual({
      count: 2,
      timeoutMs: 1_000,
    })
    expect(() => new WebhookQueue({ connection, enqueueTimeout: 500, waitForReplicas: { count: 1 } })).toThrow(
      'must be less than enqueueTimeout (500 ms), or enqueue() would time out before it could say that the replicas did not confirm',
    )
    expect(() => new WebhookQueue({ connection, replicas: 1 } as never)).toThrow('use `waitForReplicas` instead')
  })

  it('says what it expected, and which name was meant', () => {
    expect(() => new WebhookQueue({ connection, name: 'webhooks:eu' })).toThrow(
      'Invalid option `name`: a queue name cannot contain \':\', got "webhooks:eu".',
    )
    expect(() => new WebhookQueue({ connection, name: null as never })).toThrow(
      'Invalid option `name`: expected a non-empty string, got null.',
    )
    expect(() => new WebhookQueue({ connection, timeout: 5 } as never)).toThrow('use `enqueueTimeout` instead')
  })

  it('fills in the defaults', () => {
    expect(resolveQueueOptions({ connection })).toEqual({
      connection,
      name: DEFAULT_QUEUE_NAME,
      prefix: 'bull',
      durability: 'strict',
      enqueueTimeout: 10_000,
      deadLetters: { maxAgeMs: 7 * 24 * 3_600_000, maxCount: 100_000 },
      dedupWindowMs: 24 * 3_600_000,
    })
    expect(DEFAULT_QUEUE_NAME).toBe('eventwire-webhooks')
  })

  it('treats an option set to undefined as left out', () => {
    const unset = {
      connection,
      name: undefined,
      prefix: undefined,
      durability: undefined,
      enqueueTimeout: undefined,
      deadLetters: undefined,
      dedupWindowMs: undefined,
      waitForReplicas: undefined,
    } satisfies Required<WebhookQueueOptions>
    expect(resolveQueueOptions(unset)).toEqual(resolveQueueOptions({ connection }))
  })

  it('takes what it is given, an ioredis instance as the connection', () => {
    const redis = new Redis({ lazyConnect: true })
    try {
      expect(
        resolveQueueOptions({
          connection: redis,
          name: 'orders',
          prefix: '{eventwire}',
          durability: 'best-effort',
          enqueueTimeout: Number.POSITIVE_INFINITY,
          deadLetters: { maxCount: 10 },
          dedupWindowMs: 0,
        }),
      ).toEqual({
        connection: redis,
        name: 'orders',
        prefix: '{eventwire}',
        durability: 'best-effort',
        enqueueTimeout: Number.POSITIVE_INFINITY,
        deadLetters: { maxAgeMs: 7 * 24 * 3_600_000, maxCount: 10 },
        dedupWindowMs: 0,
      })
    } finally {
      redis.disconnect()
    }
  })
})

describe('WebhookWorker options', () => {
  it.each([
    ...refusedByBoth,
    ['a queue option', { connection, enqueueTimeout: 1_000 }, 'enqueueTimeout'],
    ['a null concurrency', { connection, concurrency: null }, 'concurrency'],
    ['a concurrency of 0', { connection, concurrency: 0 }, 'concurrency'],
    ['a fractional concurrency', { connection, concurrency: 1.5 }, 'concurrency'],
    ['an infinite concurrency', { connection, concurrency: Number.POSITIVE_INFINITY }, 'concurrency'],
    ['a concurrency as a string', { connection, concurrency: '10' }, 'concurrency'],
    ['a lockDuration of 0', { connection, lockDuration: 0 }, 'lockDuration'],
    ['a lockDuration past the longest timer', { connection, lockDuration: MAX_TIMER_MS + 1 }, 'lockDuration'],
    ['a null lockDuration', { connection, lockDuration: null }, 'lockDuration'],
    ['a stalledInterval of 0', { connection, stalledInterval: 0 }, 'stalledInterval'],
    ['a null stalledInterval', { connection, stalledInterval: null }, 'stalledInterval'],
  ])('refuses %s', (_case, options, option) => {
    expect(workerRefuses(options)).toBe(option)
  })

  it('checks its settings before its options', () => {
    expect(refusedBy(() => new WebhookWorker({ webhooks: [] }, { connection, name: '' }))).toBe('webhooks')
  })

  it('fills in the defaults (BullMQ’s own for the lock and the stalled check)', () => {
    expect(resolveWorkerOptions({ connection })).toEqual({
      connection,
      name: DEFAULT_QUEUE_NAME,
      prefix: 'bull',
      durability: 'strict',
      concurrency: 50,
      lockDuration: 30_000,
      stalledInterval: 30_000,
      attemptLog: { maxEntries: 200, maxAgeMs: 604_800_000 },
      alerts: { shares: [0.25, 0.5, 0.75], autoDisable: false },
    })
  })

  it('treats an option set to undefined as left out', () => {
    const unset = {
      connection,
      name: undefined,
      prefix: undefined,
      concurrency: undefined,
      lockDuration: undefined,
      stalledInterval: undefined,
      durability: undefined,
      attemptLog: undefined,
      keepSent: undefined,
      alerts: undefined,
    } satisfies Required<WebhookWorkerOptions>
    expect(resolveWorkerOptions(unset)).toEqual(resolveWorkerOptions({ connection }))
  })

  it('knows every option of WebhookWorkerOptions by name, and no other (a type check: npm run typecheck)', () => {
    // options.ts cannot import worker.ts, which imports it: the two lists are held together here.
    expectTypeOf<keyof typeof WORKER_OPTION_NAMES>().toEqualTypeOf<keyof WebhookWorkerOptions>()
  })

  it('takes what it is given', () => {
    const given = {
      connection,
      name: 'orders',
      prefix: 'eu',
      concurrency: 1,
      lockDuration: 2_000,
      stalledInterval: 1_000,
      durability: 'best-effort',
      attemptLog: { maxEntries: 10, maxAgeMs: 60_000 },
      keepSent: { maxEntries: 10, maxAgeMs: 60_000 },
      alerts: { shares: [0.5], autoDisable: true },
    } as const
    expect(resolveWorkerOptions(given)).toEqual(given)
    expect(resolveWorkerOptions({ connection, attemptLog: false }).attemptLog).toBeUndefined()
  })
})

describe('WebhookWorker and the in-memory lane settings', () => {
  it.each([['maxPendingPerUrl', 5]])(
    'refuses %s rather than ignore it: it bounds what waits in memory, and a worker keeps its backlog in Redis',
    (name, value) => {
      expect(
        () =>
          new WebhookWorker(
            { webhooks: [{ url: 'https://hooks.example.com/in' }], [name]: value },
            { connection: { host: '127.0.0.1', port: 1, maxRetriesPerRequest: null } },
          ),
      ).toThrow(new RegExp(`Invalid option \`${name}\`: applies to WebhookDestination only`))
    },
  )
})

describe('WebhookWorker and an unknown setting', () => {
  it('names the settings a worker takes, not maxPendingPerUrl, which it refuses', () => {
    const refusal = (() => {
      try {
        new WebhookWorker(
          { webhooks: [{ url: 'https://hooks.example.com/in' }], proxy: 'http://127.0.0.1:3128' } as never,
          {
            connection: { host: '127.0.0.1', port: 1, maxRetriesPerRequest: null },
          },
        )
      } catch (error) {
        return error as Error
      }
      return undefined
    })()
    expect(refusal?.message).toMatch(
      /^Invalid option `proxy`: no such option; the options are webhooks, sharedSecret, /,
    )
    expect(refusal?.message).toContain('maxConcurrencyPerUrl')
    expect(refusal?.message).not.toContain('maxPendingPerUrl')
  })
})

describe('a Redis Cluster connection', () => {
  // Never connects: the check is on the options, before any command.
  const cluster = () => new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true })

  it('is refused at once without a hash-tagged prefix, naming the prefix to use', () => {
    const connection = cluster()
    try {
      for (const attempt of [
        () => new WebhookQueue({ connection }),
        () => new WebhookWorker({ webhooks: [{ url: 'https://hooks.example.com/in' }] }, { connection }),
      ]) {
        expect(attempt).toThrow(OptionsError)
        expect(attempt).toThrow(
          'Invalid option `prefix`: on a Redis Cluster every key of a queue must be in one slot: give a hash-tagged prefix such as "{bull}"',
        )
      }
      expect(() => resolveQueueOptions({ connection, prefix: 'ew' })).toThrow('such as "{ew}"')
      // Redis hashes between the first { and the next }: an empty tag there means the whole key, whatever follows.
      expect(() => resolveQueueOptions({ connection, prefix: '{}{ew}' })).toThrow(OptionsError)
      // The prefix suggested is a plain hash tag, not the given braces wrapped again.
      expect(() => resolveQueueOptions({ connection, prefix: 'x{}y' })).toThrow('such as "{xy}"')
      expect(() => resolveQueueOptions({ connection, prefix: '{}' })).toThrow('such as "{eventwire}"')
    } finally {
      connection.disconnect()
    }
  })

  it('is taken with a hash-tagged prefix', () => {
    const connection = cluster()
    try {
      expect(resolveQueueOptions({ connection, prefix: '{ew}' }).prefix).toBe('{ew}')
      expect(resolveWorkerOptions({ connection, prefix: 'app:{ew}' }).prefix).toBe('app:{ew}')
      expect(resolveQueueOptions({ connection, prefix: 'a}{ew}' }).prefix).toBe('a}{ew}')
    } finally {
      connection.disconnect()
    }
  })
})
