// A tracking plan in Zod: calls that follow it are sent (with the schema's defaults), a call that
// breaks it is refused with the path at fault, and in 'report' mode it is sent and reported.
//
//   npm run build && node examples/tracking-plan.mjs
import { createServer } from 'node:http'
import { z } from 'zod'
import { Client, definePlan } from 'eventwire'

/** The plan: shared by every part of the app that tracks, one import away. */
export const plan = definePlan({
  events: {
    'Order Completed': z.object({
      orderId: z.string(),
      total: z.number().nonnegative(),
      currency: z.enum(['EUR', 'USD']).default('EUR'),
    }),
    'Signed Up': z.object({ referrer: z.string().optional() }),
  },
  traits: z.object({ email: z.email(), plan: z.enum(['free', 'pro']).optional() }),
})

/** Runs the example against `endpoint`; returns what it printed, for the test. */
export async function run(endpoint, print = console.log) {
  const analytics = new Client('write-key', { endpoint, plan })
  analytics.identify({ userId: 'u1', traits: { email: 'ada@example.com', plan: 'pro' } })
  analytics.track({ userId: 'u1', event: 'Order Completed', properties: { orderId: 'o1', total: 42 } })
  try {
    analytics.track({ userId: 'u1', event: 'Order Completed', properties: { orderId: 'o2', total: -5 } })
  } catch (error) {
    print(`refused: ${error.code} at ${error.field}`)
  }
  await analytics.close()

  // Rolling a plan out: send what breaks it, and hear about it.
  const lenient = new Client('write-key', { endpoint, plan, planCheck: 'report' })
  lenient.on('violation', (violation) => print(`violation: ${violation.field} (${violation.issues[0]?.message})`))
  lenient.track({ userId: 'u1', event: 'Order Completed', properties: { orderId: 'o3', total: -5 } })
  await lenient.close()
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const received = []
  const sink = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      received.push(...JSON.parse(body).batch)
      response.end('{}')
    })
  })
  await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve))
  await run(`http://127.0.0.1:${sink.address().port}`)
  for (const message of received)
    console.log('sent:', message.type, message.event ?? '', JSON.stringify(message.properties ?? message.traits))
  sink.close()
}
