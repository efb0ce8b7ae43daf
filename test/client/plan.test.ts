import vm from 'node:vm'
import { type } from 'arktype'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  Client,
  definePlan,
  OptionsError,
  ValidationError,
  type PlanViolationInfo,
  type SchemaPlan,
} from '../../src/index.js'
import { useSinks, type Sink } from '../helpers/sink.js'

const sink = useSinks()

const sent = (server: Sink) => server.requests.flatMap((request) => JSON.parse(request.body).batch)

/** The same plan in each library: an order with a total and an optional coupon, and traits with an email. */
const plans = {
  'Zod 4': definePlan({
    events: {
      'Order Completed': z.object({
        total: z.number().nonnegative(),
        items: z.array(z.object({ sku: z.string() })),
        coupon: z.string().optional(),
      }),
    },
    traits: z.object({ email: z.email() }),
    groupTraits: z.object({ seats: z.number().int() }),
  }),
  'Valibot 1': definePlan({
    events: {
      'Order Completed': v.object({
        total: v.pipe(v.number(), v.minValue(0)),
        items: v.array(v.object({ sku: v.string() })),
        coupon: v.optional(v.string()),
      }),
    },
    traits: v.object({ email: v.pipe(v.string(), v.email()) }),
    groupTraits: v.object({ seats: v.pipe(v.number(), v.integer()) }),
  }),
  'ArkType 2': definePlan({
    events: {
      'Order Completed': type({ total: 'number >= 0', items: type({ sku: 'string' }).array(), 'coupon?': 'string' }),
    },
    traits: type({ email: 'string.email' }),
    groupTraits: type({ seats: 'number.integer' }),
  }),
}

// The compile-time rules are in test/plan.test-d.ts: here each plan is a SchemaPlan, whatever its library.
describe.each(Object.entries(plans) as Array<[string, SchemaPlan]>)('a plan of %s schemas', (_library, plan) => {
  it('sends calls that follow it, and refuses those that do not, naming the path the schema names', async () => {
    const server = await sink()
    const client = new Client('key', { endpoint: server.url, plan })
    client.track({ userId: 'u1', event: 'Order Completed', properties: { total: 42, items: [{ sku: 'a' }] } })
    client.identify({ userId: 'u1', traits: { email: 'ada@example.com' } })
    client.group({ userId: 'u1', groupId: 'g1', traits: { seats: 5 } })
    const refused = (call: () => unknown) => {
      try {
        call()
      } catch (error) {
        return error
      }
      throw new Error('expected the call to be refused')
    }
    const wrongType = refused(() =>
      client.track({
        userId: 'u1',
        event: 'Order Completed',
        properties: { total: 42, items: [{ sku: 'a' }, { sku: 7 }] },
      }),
    )
    expect(wrongType).toBeInstanceOf(ValidationError)
    expect(wrongType).toMatchObject({ code: 'ERR_PLAN_VIOLATION', field: 'properties.items[1].sku' })
    expect(String((wrongType as Error).message)).toMatch(
      /^track\(\): properties\.items\[1\]\.sku: .+\(the tracking plan\)\.$/,
    )
    const unknown = refused(() => client.track({ userId: 'u1', event: 'Order Complete', properties: {} }))
    expect(unknown).toMatchObject({ code: 'ERR_PLAN_VIOLATION', field: 'event' })
    expect(String((unknown as Error).message)).toContain(
      '"Order Complete" is not an event of the plan ("Order Completed")',
    )
    expect(refused(() => client.identify({ userId: 'u1', traits: { email: 'not an email' } }))).toMatchObject({
      code: 'ERR_PLAN_VIOLATION',
      field: 'traits.email',
    })
    expect(refused(() => client.group({ userId: 'u1', groupId: 'g1', traits: { seats: 1.5 } }))).toMatchObject({
      field: 'traits.seats',
    })
    // A missing required property, with properties left out altogether.
    expect(refused(() => client.track({ userId: 'u1', event: 'Order Completed' }))).toMatchObject({
      code: 'ERR_PLAN_VIOLATION',
    })
    // Other call types are not in the plan: they pass as ever.
    client.page({ userId: 'u1', name: 'Home' })
    await client.close()
    expect(sent(server).map((message: { type: string }) => message.type)).toEqual([
      'track',
      'identify',
      'group',
      'page',
    ])
  })

  it("with planCheck: 'report', sends a call that breaks it as given and emits 'violation'", async () => {
    const server = await sink()
    const client = new Client('key', { endpoint: server.url, plan, planCheck: 'report' })
    const violations: PlanViolationInfo[] = []
    client.on('violation', (violation) => violations.push(violation))
    const properties = { total: -1, items: [] }
    expect(client.track({ userId: 'u1', event: 'Order Completed', properties })).toBe(true)
    await client.close()
    expect(violations).toHaveLength(1)
    expect(violations[0]).toMatchObject({ type: 'track', field: 'properties.total' })
    expect(violations[0]?.issues.length).toBeGreaterThan(0)
    expect(sent(server)[0]).toMatchObject({ event: 'Order Completed', properties: { total: -1 } })
  })

  it("with planCheck: 'report', sends what it read and checked, reading the caller's fields once", async () => {
    const server = await sink()
    const client = new Client('key', { endpoint: server.url, plan, planCheck: 'report' })
    let reads = 0
    const shifty = {
      userId: 'u1',
      event: 'Order Completed',
      get properties() {
        reads++
        return reads === 1 ? { total: 'not a number', items: [] } : { total: 'DIFFERENT', injected: true }
      },
    }
    const violations: PlanViolationInfo[] = []
    client.on('violation', (violation) => violations.push(violation))
    client.track(shifty as never)
    await client.close()
    expect(reads).toBe(1)
    expect(sent(server)[0].properties).toEqual({ total: 'not a number', items: [] })
    expect(violations[0]?.message).toMatchObject({ properties: { total: 'not a number' } })
  })

  it("with planCheck: 'report', tells a violation only for a call that is queued, and loses none to a listener that closes", async () => {
    const server = await sink()
    const client = new Client('key', { endpoint: server.url, plan, planCheck: 'report' })
    const violations: PlanViolationInfo[] = []
    let closing: Promise<void> | undefined
    client.on('violation', (violation) => {
      violations.push(violation)
      closing ??= client.close()
    })
    // Breaks the plan and the call's own rules: refused, and no violation told.
    expect(() => client.track({ event: 'Order Completed', properties: { total: -1, items: [] } } as never)).toThrow(
      expect.objectContaining({ code: 'ERR_MISSING_IDENTITY' }),
    )
    expect(violations).toHaveLength(0)
    const outcomes: Array<Error | undefined> = []
    client.track({ userId: 'u1', event: 'Order Completed', properties: { total: -1, items: [] } }, (error) =>
      outcomes.push(error),
    )
    expect(violations).toHaveLength(1)
    await closing
    expect(outcomes).toEqual([undefined])
    expect(sent(server)).toHaveLength(1)
  })

  it("with planCheck: 'off', checks nothing at run time", async () => {
    const server = await sink()
    const client = new Client('key', { endpoint: server.url, plan, planCheck: 'off' })
    client.track({ userId: 'u1', event: 'Order Completed', properties: { total: -1, items: [] } })
    await client.close()
    expect(sent(server)).toHaveLength(1)
  })
})

describe('plans: what is sent, and what is refused at construction', () => {
  it("sends the schema's output (defaults and normalized values), and never changes the caller's object", async () => {
    const server = await sink()
    const plan = definePlan({
      events: {
        'Signed Up': z.object({ email: z.string().trim().toLowerCase(), source: z.string().default('direct') }),
      },
    })
    const client = new Client('key', { endpoint: server.url, plan })
    const properties = { email: '  Ada@Example.COM ' }
    client.track({ userId: 'u1', event: 'Signed Up', properties })
    await client.close()
    expect(sent(server)[0]?.properties).toEqual({ email: 'ada@example.com', source: 'direct' })
    expect(properties).toEqual({ email: '  Ada@Example.COM ' })
  })

  it('still applies the client rules to what the schema gives back', () => {
    const plan = definePlan({ events: { E: z.object({ n: z.number().transform((n) => BigInt(n)) }) } })
    const client = new Client('key', { plan })
    expect(() => client.track({ userId: 'u1', event: 'E', properties: { n: 1 } })).toThrow(
      expect.objectContaining({ code: 'ERR_NOT_SERIALIZABLE' }),
    )
  })

  it('takes a synchronous schema whose preprocess would throw on undefined', () => {
    const plan = definePlan({
      // Reads a field of its input: throws on undefined, which Zod turns into a promise.
      events: {
        E: z.preprocess(
          (value) => ({ total: Number((value as { total?: number }).total ?? 3) }),
          z.object({ total: z.number() }),
        ),
      },
    })
    expect(() => new Client('key', { plan }).track({ userId: 'u1', event: 'E', properties: {} })).not.toThrow()
  })

  it('refuses at construction an entry that is not a Standard Schema, or one that is always asynchronous', () => {
    expect(() => definePlan({ events: { E: { parse: () => ({}) } as never } })).toThrow(OptionsError)
    expect(() => definePlan({ events: { E: { parse: () => ({}) } as never } })).toThrow(
      /events\["E"\] is not a Standard Schema/,
    )
    expect(() => definePlan({ traits: 'string' } as never)).toThrow(/traits is not a Standard Schema/)
    expect(() => definePlan({ event: {} } as never)).toThrow(/unknown entry `event`/)
    // The client checks with what definePlan made: a plan object of its own is refused, not ignored.
    expect(() => new Client('key', { plan: { events: { E: z.object({}) } } })).toThrow(/made with definePlan/)
    const asyncPlan = { events: { E: v.objectAsync({ n: v.number() }) } }
    expect(() => definePlan(asyncPlan)).toThrow(/events\["E"\] validates asynchronously/)
    const plan = definePlan({ events: { E: z.object({}) } })
    expect(() => new Client('key', { plan, planCheck: 'warn' as never })).toThrow(OptionsError)
    expect(() => new Client('key', { plan, planCheck: 'warn' as never })).toThrow(/planCheck/)
  })

  it('refuses, at the call, a schema that turns out asynchronous there (any thenable), queuing nothing', () => {
    const foreignPromise = vm.runInNewContext('Promise') as PromiseConstructor
    const answering = (answer: () => unknown) =>
      definePlan({
        events: {
          E: {
            '~standard': {
              version: 1,
              vendor: 'x',
              validate: (value) =>
                (value && typeof value === 'object' && Object.keys(value).length > 0 ? answer() : { value }) as never,
            },
          },
        },
      })
    for (const plan of [
      definePlan({ events: { E: z.object({ n: z.number() }).refine(async () => true) } }),
      answering(() => foreignPromise.resolve({ value: {} })),
      // biome-ignore lint/suspicious/noThenProperty: a thenable schema answer is what this checks.
      answering(() => ({ then: (resolve: (value: unknown) => void) => resolve({ value: {} }) })),
    ]) {
      const client = new Client('key', { plan })
      expect(() => client.track({ userId: 'u1', event: 'E', properties: { n: 1 } })).toThrow(
        expect.objectContaining({
          code: 'ERR_PLAN_VIOLATION',
          field: 'properties',
          message: expect.stringMatching(/asynchronously/),
        }),
      )
      expect(client.pending).toBe(0)
    }
    // Always asynchronous, as a promise of another realm: refused at construction.
    const alwaysForeign = {
      '~standard': { version: 1, vendor: 'x', validate: () => foreignPromise.resolve({ value: {} }) },
    }
    expect(() => definePlan({ events: { E: alwaysForeign as never } })).toThrow(OptionsError)
  })

  it('refuses a success without a value, which would send the call without the checked field', () => {
    const empty = { '~standard': { version: 1, vendor: 'x', validate: () => ({}) } }
    const client = new Client('key', { plan: definePlan({ events: { E: empty as never } }) })
    expect(() => client.track({ userId: 'u1', event: 'E', properties: { total: 'x' } } as never)).toThrow(
      expect.objectContaining({ code: 'ERR_PLAN_VIOLATION', field: 'properties' }),
    )
  })

  it('reads inherited and non-enumerable fields as a call without a plan does', async () => {
    const server = await sink()
    const client = new Client('key', {
      endpoint: server.url,
      plan: definePlan({ events: { E: z.object({ n: z.number() }) } }),
    })
    class Visit {
      get userId() {
        return 'u1'
      }
      get name() {
        return 'Home'
      }
    }
    const tracked = Object.create({ userId: 'u1', event: 'E', properties: { n: 1 } })
    Object.defineProperty(tracked, 'messageId', { value: 'm-1', enumerable: false })
    client.page(new Visit() as never)
    client.track(tracked)
    await client.close()
    expect(sent(server)).toMatchObject([
      { type: 'page', userId: 'u1', name: 'Home' },
      { type: 'track', event: 'E', properties: { n: 1 }, messageId: 'm-1' },
    ])
  })

  it('leaves a track without an event to the call rules (ERR_MISSING_EVENT), not the plan', () => {
    const client = new Client('key', { plan: definePlan({ events: { E: z.object({}) } }) })
    expect(() => client.track({ userId: 'u1' } as never)).toThrow(
      expect.objectContaining({ code: 'ERR_MISSING_EVENT' }),
    )
  })

  it('names an event that is not a string by its type, whatever its toJSON does', () => {
    const client = new Client('key', { plan: definePlan({ events: { E: z.object({}) } }) })
    let calls = 0
    const event = {
      toJSON() {
        if (++calls > 1) throw new Error('second call')
        return 'E'
      },
    }
    expect(() => client.track({ userId: 'u1', event } as never)).toThrow(
      expect.objectContaining({
        code: 'ERR_PLAN_VIOLATION',
        field: 'event',
        message: expect.stringMatching(/a name of type object is not an event/),
      }),
    )
  })

  it('reads at most 100 issues of a schema, however long its list', () => {
    const endless = { '~standard': { version: 1, vendor: 'x', validate: () => ({ issues: new Array(2 ** 32 - 1) }) } }
    const client = new Client('key', { plan: definePlan({ events: { E: endless as never } }) })
    expect(() => client.track({ userId: 'u1', event: 'E' } as never)).toThrow(
      expect.objectContaining({ code: 'ERR_PLAN_VIOLATION' }),
    )
  })

  it('reads only its own entries, whatever Object.prototype holds', () => {
    const client = new Client('key', { plan: definePlan({ events: { E: z.object({}) } }) })
    const prototype = Object.prototype as Record<string, unknown>
    prototype['traits'] = 'polluted'
    try {
      expect(client.identify({ userId: 'u1', traits: { any: 1 } })).toBe(true)
    } finally {
      delete prototype['traits']
    }
  })

  it('refuses a call whose schema throws, naming the field', () => {
    const plan = definePlan({
      events: {
        E: v.pipe(
          v.object({ n: v.number() }),
          v.transform(() => {
            throw new Error('boom')
          }),
        ),
      },
    })
    const client = new Client('key', { plan })
    expect(() => client.track({ userId: 'u1', event: 'E', properties: { n: 1 } })).toThrow(
      expect.objectContaining({
        code: 'ERR_PLAN_VIOLATION',
        field: 'properties',
        message: expect.stringContaining('boom'),
      }),
    )
    // Zod answers a transform that throws with a rejected promise: refused as asynchronous, and the
    // rejection is handled (no unhandled rejection).
    const zodPlan = definePlan({
      events: {
        E: z.object({ n: z.number() }).transform(() => {
          throw new Error('boom')
        }),
      },
    })
    expect(() =>
      new Client('key', { plan: zodPlan }).track({ userId: 'u1', event: 'E', properties: { n: 1 } }),
    ).toThrow(/asynchronously/)
  })

  it('applies an optional or defaulted schema to an absent field, and probes nothing a call would not pass', async () => {
    const server = await sink()
    const plan = definePlan({
      events: {
        Viewed: z.object({ page: z.string() }).default({ page: 'home' }),
        Clicked: v.optional(v.object({ target: v.string() })),
        Odd: {
          '~standard': {
            version: 1,
            vendor: 'hand-made',
            // Throws on nothing: definePlan's probe must not take that for a broken plan.
            validate: (value: unknown) => {
              if (value === undefined) throw new TypeError('nothing to check')
              return { value }
            },
          },
        },
      },
    })
    const client = new Client('key', { endpoint: server.url, plan })
    client.track({ userId: 'u1', event: 'Viewed' })
    client.track({ userId: 'u1', event: 'Clicked' })
    await client.close()
    expect(sent(server).map((message: { properties?: unknown }) => message.properties)).toEqual([
      { page: 'home' },
      undefined,
    ])
  })

  it('turns whatever a schema or the caller does into ERR_PLAN_VIOLATION, never a raw error', () => {
    const garbage = (result: unknown) =>
      definePlan({ events: { E: { '~standard': { version: 1, vendor: 'x', validate: () => result as never } } } })
    for (const result of [{ issues: 'bad' }, { issues: [null] }, 'text', { issues: [{ message: { toString: 1 } }] }]) {
      const client = new Client('key', { plan: garbage(result) })
      expect(() => client.track({ userId: 'u1', event: 'E' })).toThrow(
        expect.objectContaining({ code: 'ERR_PLAN_VIOLATION' }),
      )
    }
    const plan = definePlan({ events: { E: z.object({}) } })
    const client = new Client('key', { plan })
    const hostile = {
      userId: 'u1',
      get event(): string {
        throw new Error('a getter that throws')
      },
    }
    expect(() => client.track(hostile as never)).toThrow(
      expect.objectContaining({ code: 'ERR_PLAN_VIOLATION', field: 'event' }),
    )
  })

  it('checks and sends the same fields: each is read once', async () => {
    const server = await sink()
    const plan = definePlan({ events: { M: z.object({}) } })
    const client = new Client('key', { endpoint: server.url, plan })
    let reads = 0
    const shifty = {
      userId: 'u1',
      get event() {
        reads++
        return reads === 1 ? 'M' : 'Not In Plan'
      },
    }
    client.track(shifty as never)
    await client.close()
    expect(sent(server).map((message: { event: string }) => message.event)).toEqual(['M'])
  })

  it('refuses a bad planCheck with or without a plan', () => {
    expect(() => new Client('key', { planCheck: 'warn' as never })).toThrow(/planCheck/)
  })
})
