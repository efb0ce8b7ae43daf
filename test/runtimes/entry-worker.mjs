// Cloudflare workerd runs this bundle: the conformance cases inside a fetch handler.
import * as client from 'eventwire'
import * as webhook from 'eventwire/webhook'
import { runConformance } from './conformance.mjs'
// The README's Hono recipe, as a Worker would serve it (copied from examples/ by the matrix).
import { createReceiver } from './receiver-hono.mjs'

/** Events the Hono recipe verified, for the matrix to read back (module state lives as long as the isolate). */
const verified = []
const hono = createReceiver('s3cret', (event) => verified.push(event))

/**
 * A serverless handler as users write one: a client per request, one call, the response at once.
 * `mode`: `wait` hands the client's work to `ctx.waitUntil`; `none` does not (what is lost);
 * `marker` waits 200 ms inside the request, then sends with `waitUntil` (what shows the loss).
 */
async function serverless(params, ctx) {
  const mode = params.get('mode')
  const endpoint = `${params.get('base')}/ingest/${params.get('run')}`
  if (mode === 'marker') await new Promise((resolve) => setTimeout(resolve, 200))
  const analytics = new client.Client('key', {
    endpoint,
    flushAfter: 50,
    ...(mode === 'none' ? {} : { waitUntil: ctx.waitUntil.bind(ctx) }),
  })
  analytics.track({ userId: 'u1', event: 'Handled', messageId: `serverless-${mode}` })
  return new Response('ok')
}

export default {
  async fetch(request, _env, ctx) {
    const params = new URL(request.url).searchParams
    const { pathname } = new URL(request.url)
    if (pathname === '/serverless') return serverless(params, ctx)
    if (pathname === '/webhooks') return hono.fetch(request)
    if (pathname === '/verified') return Response.json(verified)
    const run = params.get('run')
    const results = await runConformance(
      {
        api: { ...client, ...webhook },
        base: params.get('base'),
        run,
        vectors: JSON.parse(params.get('vectors')),
        writeKey: `key-${run}`,
      },
      { server: false },
    )
    return new Response(JSON.stringify(results), { headers: { 'content-type': 'application/json' } })
  },
}
