// A webhook receiver for fetch-style runtimes: Cloudflare Workers, Deno, Bun, and Node >= 20
// through any adapter that hands you a `Request`.
//
//   Workers:  export default { fetch: (request, env) => handleWebhook(request, env.WEBHOOK_SECRET) }
//   Deno:     Deno.serve((request) => handleWebhook(request, Deno.env.get('WEBHOOK_SECRET')))
//   Bun:      Bun.serve({ fetch: (request) => handleWebhook(request, Bun.env.WEBHOOK_SECRET) })
//
// Read the body once as bytes, verify those bytes, then parse them: never verify a re-serialized body.
import { verifySignature } from 'eventwire/webhook'

export async function handleWebhook(request, secret, onEvent = (event) => console.log('verified', event.type)) {
  if (request.method !== 'POST') return new Response('method not allowed', { status: 405 })
  const body = new Uint8Array(await request.arrayBuffer())
  if (!(await verifySignature(body, request.headers.get('x-signature'), secret))) {
    return new Response('bad signature', { status: 401 })
  }
  onEvent(JSON.parse(new TextDecoder().decode(body)))
  return new Response(null, { status: 204 })
}

export default {
  fetch: (request, env) => handleWebhook(request, env.WEBHOOK_SECRET),
}
