// The run-time cost of what shapes a call: CPU per track call with no plan, with the same plan in
// each schema library, and with a chain of three middlewares (scrub e-mail addresses, add a
// request id, sample at rate 1), in one process, alternating in short runs of `calls` calls on a fresh
// client (so the JIT, the heap and the machine are the same for all), `rounds` runs each; the
// median run counts. Calls only: nothing is sent while measuring.
//
//   node bench/plan-run.mjs '{"calls":10000,"rounds":30}'
import { type } from 'arktype'
import * as v from 'valibot'
import { z } from 'zod'
import { orderProperties as properties } from './typical-event.mjs'

const { calls, rounds } = JSON.parse(process.argv[2] ?? '{"calls":10000,"rounds":30}')
const { Client, definePlan } = await import(process.env.EVENTWIRE_ENTRY ?? 'eventwire')

const plans = {
  'no plan': undefined,
  'Zod 4': definePlan({
    events: {
      'Order Completed': z.object({
        orderId: z.string(),
        total: z.number().nonnegative(),
        currency: z.enum(['EUR', 'USD']),
        items: z.array(z.object({ sku: z.string(), price: z.number(), quantity: z.number().int() })),
      }),
    },
  }),
  'Valibot 1': definePlan({
    events: {
      'Order Completed': v.object({
        orderId: v.string(),
        total: v.pipe(v.number(), v.minValue(0)),
        currency: v.picklist(['EUR', 'USD']),
        items: v.array(v.object({ sku: v.string(), price: v.number(), quantity: v.pipe(v.number(), v.integer()) })),
      }),
    },
  }),
  'ArkType 2': definePlan({
    events: {
      'Order Completed': type({
        orderId: 'string',
        total: 'number >= 0',
        currency: "'EUR' | 'USD'",
        items: type({ sku: 'string', price: 'number', quantity: 'number.integer' }).array(),
      }),
    },
  }),
}

const stubFetch = async () => new Response('{}')
const { scrub, withRequestId, sample } = await import('../examples/enrich-and-filter.mjs')
const setups = {
  ...Object.fromEntries(Object.entries(plans).map(([name, plan]) => [name, plan ? { plan } : {}])),
  'three middlewares': {
    middleware: [scrub(), withRequestId(() => 'req-1'), sample({ 'Order Completed': 1 })],
  },
}

function measure(setup) {
  const client = new Client('bench-key', {
    fetch: stubFetch,
    flushAt: 10_000_000,
    flushAfter: 600_000,
    maxQueueSize: 10_000_000,
    ...setup,
  })
  const before = process.cpuUsage()
  for (let index = 0; index < calls; index++) {
    client.track({ userId: `user-${index % 1000}`, event: 'Order Completed', properties: properties(index) })
  }
  const cpu = process.cpuUsage(before)
  void client.close({ timeout: 0 })
  return (cpu.user + cpu.system) / calls
}

const samples = Object.fromEntries(Object.keys(setups).map((name) => [name, []]))
for (let round = 0; round < rounds; round++) {
  for (const [name, setup] of Object.entries(setups)) samples[name].push(measure(setup))
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const result = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]))
console.log(JSON.stringify({ calls, rounds, cpuMicrosPerCall: result }))
