import type { Server } from 'node:http'
import { serve } from '@hono/node-server'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { signPayload, WebhookDestination } from '../../src/webhook/index.js'
// @ts-expect-error: the examples are plain JavaScript
import { createReceiver as createExpressReceiver } from '../../examples/receiver-express.mjs'
// @ts-expect-error: the examples are plain JavaScript
import { createReceiver as createFastifyReceiver } from '../../examples/receiver-fastify.mjs'
// @ts-expect-error: the examples are plain JavaScript
import { handleWebhook } from '../../examples/receiver-fetch.mjs'
// @ts-expect-error: the examples are plain JavaScript
import { createReceiver as createHonoReceiver } from '../../examples/receiver-hono.mjs'
// @ts-expect-error: the examples are plain JavaScript
import { createPostHandler, POST } from '../../examples/receiver-next.mjs'
// @ts-expect-error: the examples are plain JavaScript
import { createReceiver as createNodeReceiver } from '../../examples/receiver-node.mjs'

const secret = 's3cret'
type FetchHandler = (request: Request) => Promise<Response>

/** A receiver listening on loopback: where to POST, the events it accepted, and how to stop it. */
interface Running {
  url: string
  events: unknown[]
  close(): Promise<void>
}

let running: Running | undefined
afterEach(async () => {
  await running?.close()
  running = undefined
})

/** Waits until `server` listens on 127.0.0.1 (port 0: any free one) and describes it. */
async function listening(server: Server, path: string, events: unknown[]): Promise<Running> {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}${path}`,
    events,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      }),
  }
}

/** Serves a `Request` -> `Response` function on Node through @hono/node-server. */
function serveFetch(fetch: FetchHandler, path: string, events: unknown[]): Promise<Running> {
  return listening(serve({ fetch, port: 0, hostname: '127.0.0.1' }) as Server, path, events)
}

const recipes: { name: string; start(): Promise<Running> }[] = [
  {
    name: 'examples/receiver-express.mjs',
    async start() {
      const events: unknown[] = []
      const app = createExpressReceiver(secret, (event: unknown) => events.push(event)) as {
        listen(port: number, host: string): Server
      }
      return listening(app.listen(0, '127.0.0.1'), '/webhooks', events)
    },
  },
  {
    name: 'examples/receiver-fastify.mjs',
    async start() {
      const events: unknown[] = []
      const app = createFastifyReceiver(secret, (event: unknown) => events.push(event)) as {
        listen(options: { port: number; host: string }): Promise<string>
        close(): Promise<void>
      }
      const address = await app.listen({ port: 0, host: '127.0.0.1' })
      return { url: `${address}/webhooks`, events, close: () => app.close() }
    },
  },
  {
    name: 'examples/receiver-hono.mjs (on Node through @hono/node-server)',
    start() {
      const events: unknown[] = []
      const app = createHonoReceiver(secret, (event: unknown) => events.push(event)) as { fetch: FetchHandler }
      return serveFetch(app.fetch, '/webhooks', events)
    },
  },
  {
    name: 'examples/receiver-next.mjs (the route handler served through @hono/node-server)',
    start() {
      const events: unknown[] = []
      const post = createPostHandler(secret, (event: unknown) => events.push(event)) as FetchHandler
      return serveFetch(post, '/api/webhooks', events)
    },
  },
  {
    name: 'examples/receiver-node.mjs',
    start() {
      const events: unknown[] = []
      return listening(
        (createNodeReceiver(secret, (event: unknown) => events.push(event)) as Server).listen(0, '127.0.0.1'),
        '/webhooks',
        events,
      )
    },
  },
]

const body = '{"type":"track","userId":"u1","event":"Paid","properties":{"note":"Café ☕"}}'
/** Content types a correctly signed body may come with: none of them may keep it from being verified. */
const contentTypes: { label: string; contentType: string | undefined }[] = [
  { label: 'text/plain', contentType: 'text/plain' },
  { label: 'application/x-www-form-urlencoded', contentType: 'application/x-www-form-urlencoded' },
  { label: 'none', contentType: undefined },
]

/** POSTs the bytes of `data` (bytes, so that fetch adds no content type of its own). */
function post(url: string, data: string, signature: string | undefined, contentType?: string): Promise<Response> {
  const headers: Record<string, string> = {}
  if (contentType !== undefined) headers['content-type'] = contentType
  if (signature !== undefined) headers['x-signature'] = signature
  return fetch(url, { method: 'POST', headers, body: new TextEncoder().encode(data) })
}

describe.each(recipes)('$name', ({ start }) => {
  it('accepts what a real WebhookDestination delivers, non-ASCII text intact', async () => {
    running = await start()
    const destination = new WebhookDestination({ webhooks: [{ url: running.url }], sharedSecret: secret })
    const result = await destination.deliver({
      type: 'track',
      userId: 'u1',
      event: 'Paid',
      properties: { note: 'Café ☕' },
    })
    await destination.close()
    expect(result).toMatchObject({ status: 'delivered', urls: [{ lastStatus: 204 }] })
    expect(running.events).toMatchObject([
      { type: 'track', userId: 'u1', event: 'Paid', properties: { note: 'Café ☕' } },
    ])
  })

  it.each(contentTypes)('accepts a correctly signed body sent with content type: $label', async ({ contentType }) => {
    running = await start()
    const response = await post(running.url, body, await signPayload(body, secret), contentType)
    expect(response.status).toBe(204)
    expect(running.events).toEqual([JSON.parse(body)])
  })

  it('answers 401 to a re-serialized body, a wrong-secret signature and a missing one', async () => {
    running = await start()
    const signature = await signPayload(body, secret)
    const json = 'application/json'
    expect((await post(running.url, JSON.stringify(JSON.parse(body), null, 2), signature, json)).status).toBe(401)
    expect((await post(running.url, body, await signPayload(body, 'wrong'), json)).status).toBe(401)
    expect((await post(running.url, body, undefined, json)).status).toBe(401)
    expect(running.events).toEqual([])
  })
})

describe('examples/receiver-next.mjs (the route handler called directly)', () => {
  const request = (data: string, signature: string | undefined, contentType?: string) => {
    const headers: Record<string, string> = {}
    if (contentType !== undefined) headers['content-type'] = contentType
    if (signature !== undefined) headers['x-signature'] = signature
    return new Request('http://localhost:3000/api/webhooks', {
      method: 'POST',
      headers,
      body: new TextEncoder().encode(data),
    })
  }

  it.each(contentTypes)(
    'answers 204 to a correctly signed body sent with content type: $label',
    async ({ contentType }) => {
      const seen: unknown[] = []
      const handler = createPostHandler(secret, (event: unknown) => seen.push(event)) as FetchHandler
      const response = await handler(request(body, await signPayload(body, secret), contentType))
      expect(response.status).toBe(204)
      expect(seen).toEqual([JSON.parse(body)])
    },
  )

  it('answers 401 to a re-serialized body, a wrong-secret signature and a missing one', async () => {
    const seen: unknown[] = []
    const handler = createPostHandler(secret, (event: unknown) => seen.push(event)) as FetchHandler
    const signature = await signPayload(body, secret)
    expect((await handler(request(JSON.stringify(JSON.parse(body), null, 2), signature))).status).toBe(401)
    expect((await handler(request(body, await signPayload(body, 'wrong')))).status).toBe(401)
    expect((await handler(request(body, undefined))).status).toBe(401)
    expect(seen).toEqual([])
  })

  it('POST reads the secret from WEBHOOK_SECRET', async () => {
    vi.stubEnv('WEBHOOK_SECRET', secret)
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    try {
      expect((await (POST as FetchHandler)(request(body, await signPayload(body, secret)))).status).toBe(204)
      expect((await (POST as FetchHandler)(request(body, await signPayload(body, 'wrong')))).status).toBe(401)
      vi.stubEnv('WEBHOOK_SECRET', 'rotated')
      expect((await (POST as FetchHandler)(request(body, await signPayload(body, secret)))).status).toBe(401)
    } finally {
      log.mockRestore()
      vi.unstubAllEnvs()
    }
  })
})

describe('examples/receiver-node.mjs', () => {
  it('answers 413 to a body over 1 MB announced by Content-Length', async () => {
    running = await recipes.find(({ name }) => name === 'examples/receiver-node.mjs')!.start()
    const response = await post(running.url, 'x'.repeat(1024 * 1024 + 1), await signPayload('x', secret))
    expect(response.status).toBe(413)
  })
})

describe('examples/receiver-fetch.mjs', () => {
  const request = (body: string, signature: string | undefined) =>
    new Request('http://receiver.test/webhooks', {
      method: 'POST',
      headers: signature === undefined ? {} : { 'x-signature': signature },
      body,
    })

  it('answers 204 to a signed body and 401 to a tampered or unsigned one', async () => {
    const body = '{"type":"identify","userId":"u1","traits":{"plan":"pro"}}'
    const signature = await signPayload(body, secret)
    const seen: unknown[] = []
    expect((await handleWebhook(request(body, signature), secret, (event: unknown) => seen.push(event))).status).toBe(
      204,
    )
    expect((await handleWebhook(request(body.replace('pro', 'free'), signature), secret)).status).toBe(401)
    expect((await handleWebhook(request(body, undefined), secret)).status).toBe(401)
    expect(seen).toEqual([{ type: 'identify', userId: 'u1', traits: { plan: 'pro' } }])
  })
})
