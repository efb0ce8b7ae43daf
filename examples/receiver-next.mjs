// A webhook receiver as a Next.js App Router route handler: save it as app/api/webhooks/route.js
// (the route is then POST /api/webhooks) and set WEBHOOK_SECRET in the environment.
//
//   WEBHOOK_SECRET=s3cret PORT=3000 node examples/receiver-next.mjs   (serves POST on Node, without Next)
//
// The signature covers the exact bytes sent. A route handler gets a Web `Request` whose body nobody
// has read yet: take the bytes with request.arrayBuffer(), verify, then parse. Calling
// request.json() first gives an object, and JSON.stringify of it is not the bytes that were signed.
// No `export const config = { api: { bodyParser: false } }` is needed: that was the Pages Router
// (pages/api/*), whose body parser ran before your code; the App Router never parses the body.
import { verifySignature } from 'eventwire/webhook'

/** Builds a `Request` -> `Response` handler; exported so the tests can call it. */
export function createPostHandler(
  secret,
  onEvent = (event) => console.log('verified', event.type, event.userId ?? event['User ID']),
) {
  return async (request) => {
    const body = new Uint8Array(await request.arrayBuffer())
    if (!(await verifySignature(body, request.headers.get('x-signature'), secret))) {
      return Response.json({ error: 'bad signature' }, { status: 401 })
    }
    onEvent(JSON.parse(new TextDecoder().decode(body)))
    return new Response(null, { status: 204 })
  }
}

/** The route handler Next.js calls for POST /api/webhooks. */
export async function POST(request) {
  // Read per request, so a rotated secret takes effect; an unset one is a clear error in the
  // server's log, not a 401 for every sender.
  const secret = process.env.WEBHOOK_SECRET
  if (!secret) throw new Error('WEBHOOK_SECRET is not set: set it to the secret the sender signs with')
  return createPostHandler(secret)(request)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { serve } = await import('@hono/node-server')
  const port = Number(process.env.PORT ?? 3000)
  serve(
    {
      fetch: (request) => (request.method === 'POST' ? POST(request) : new Response(null, { status: 405 })),
      port,
      hostname: '127.0.0.1',
    },
    () => console.log(`listening on http://127.0.0.1:${port}/api/webhooks`),
  )
}
