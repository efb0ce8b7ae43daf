import type { Server } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { signPayload, WebhookDestination } from '../../src/webhook/index.js'
// @ts-expect-error: the examples are plain JavaScript
import { createReceiver } from '../../examples/receiver-express.mjs'
// @ts-expect-error: the examples are plain JavaScript
import { handleWebhook } from '../../examples/receiver-fetch.mjs'

const secret = 's3cret'
let server: Server | undefined
afterEach(() => {
  server?.close()
  server = undefined
})

async function expressReceiver(events: unknown[]): Promise<string> {
  const app = createReceiver(secret, (event: unknown) => events.push(event)) as {
    listen(port: number, host: string): Server
  }
  server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server?.once('listening', resolve))
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/webhooks`
}

describe('examples/receiver-express.mjs', () => {
  it('accepts what WebhookDestination signs and turns away forgeries and re-serialized bodies', async () => {
    const events: unknown[] = []
    const url = await expressReceiver(events)
    const destination = new WebhookDestination({ webhooks: [{ url }], sharedSecret: secret })
    const result = await destination.deliver({
      type: 'track',
      userId: 'u1',
      event: 'Paid',
      properties: { note: 'Café ☕' },
    })
    await destination.close()
    expect(result).toMatchObject({ status: 'delivered', urls: [{ lastStatus: 204 }] })
    expect(events).toMatchObject([{ type: 'track', event: 'Paid', properties: { note: 'Café ☕' } }])

    const body = '{"type":"track","userId":"u1"}'
    const signature = await signPayload(body, secret)
    const post = (data: string, sig: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-signature': sig }, body: data })
    expect((await post(body, signature)).status).toBe(204)
    expect((await post(JSON.stringify(JSON.parse(body), null, 2), signature)).status).toBe(401)
    expect((await post(body, await signPayload(body, 'wrong'))).status).toBe(401)
    expect((await post(body, '')).status).toBe(401)
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
