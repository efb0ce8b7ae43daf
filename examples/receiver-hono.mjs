// A webhook receiver in Hono that checks X-Signature before trusting a body. It uses Web APIs only,
// so the same app runs on Node (through @hono/node-server), Cloudflare Workers, Deno and Bun.
//
//   WEBHOOK_SECRET=s3cret PORT=3000 node examples/receiver-hono.mjs
//   Workers:  const app = createReceiver(secret); export default app   (or { fetch: app.fetch })
//
// The signature covers the exact bytes sent. Read them with c.req.arrayBuffer(), verify, then parse:
// c.req.json() (or a JSON validator middleware) before verifying gives an object, and
// JSON.stringify of it is not the bytes that were signed. arrayBuffer() reads every content type.
import { Hono } from 'hono'
import { verifySignature } from 'eventwire/webhook'

/** Builds the app; exported so the tests can run it. */
export function createReceiver(
  secret,
  onEvent = (event) => console.log('verified', event.type, event.userId ?? event['User ID']),
) {
  const app = new Hono()
  app.post('/webhooks', async (c) => {
    const body = new Uint8Array(await c.req.arrayBuffer())
    if (!(await verifySignature(body, c.req.header('x-signature'), secret))) {
      return c.json({ error: 'bad signature' }, 401)
    }
    onEvent(JSON.parse(new TextDecoder().decode(body)))
    return c.body(null, 204)
  })
  return app
}

// Run directly on Node; in a Worker (no `process`) this file is only imported.
if (typeof process !== 'undefined' && import.meta.url === `file://${process.argv[1]}`) {
  const { serve } = await import('@hono/node-server')
  const secret = process.env.WEBHOOK_SECRET
  // Stop at start: a receiver without its secret would refuse every request, with 401s nobody reads.
  if (!secret) throw new Error('WEBHOOK_SECRET is not set: set it to the secret the sender signs with')
  const port = Number(process.env.PORT ?? 3000)
  serve({ fetch: createReceiver(secret).fetch, port, hostname: '127.0.0.1' }, () =>
    console.log(`listening on http://127.0.0.1:${port}/webhooks`),
  )
}
