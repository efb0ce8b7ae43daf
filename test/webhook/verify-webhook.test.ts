import { createServer, type Server } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { definePlan, OptionsError } from '../../src/index.js'
import { signPayload, verifyWebhook, WebhookDestination, type VerifiedWebhook } from '../../src/webhook/index.js'

const secret = 's3cret'
const plan = definePlan({
  events: {
    'Order Completed': z.object({ orderId: z.string(), total: z.number(), currency: z.string().default('EUR') }),
  },
  traits: z.object({ email: z.email() }),
})

let server: Server | undefined
afterEach(() => {
  server?.close()
  server = undefined
})

/** A receiver on loopback that verifies each delivery with the plan, as a user's would. */
async function receiver() {
  const outcomes: Array<VerifiedWebhook<typeof plan>> = []
  server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      const verified = await verifyWebhook(
        { headers: request.headers, body: Buffer.concat(chunks) },
        { secrets: secret, plan },
      )
      outcomes.push(verified)
      response.writeHead(verified.ok ? 204 : verified.reason === 'plan_violation' ? 422 : 401).end()
    })
  })
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`
  return { url, outcomes }
}

describe('verifyWebhook', () => {
  it("returns a real WebhookDestination's delivery parsed, checked and typed by the plan (schema output)", async () => {
    const { url, outcomes } = await receiver()
    const destination = new WebhookDestination({ webhooks: [{ url }], sharedSecret: secret })
    const delivered = await destination.deliver({
      type: 'track',
      userId: 'u1',
      event: 'Order Completed',
      properties: { orderId: 'o1', total: 42 },
    })
    await destination.close()
    expect(delivered.status).toBe('delivered')
    const [outcome] = outcomes
    if (!outcome?.ok) throw new Error(`refused: ${JSON.stringify(outcome)}`)
    const { payload } = outcome
    if (payload.type !== 'track' || payload.event !== 'Order Completed') throw new Error('unexpected payload')
    // Typed by the plan: properties.total is a number, currency the schema's default.
    const total: number = payload.properties.total
    expect(total).toBe(42)
    expect(payload.properties.currency).toBe('EUR')
    expect(payload.userId).toBe('u1')
  })

  it('refuses what the plan refuses, with the field and the issues, as plan_violation', async () => {
    const { url, outcomes } = await receiver()
    const destination = new WebhookDestination({ webhooks: [{ url }], sharedSecret: secret, retryWindowMs: 0 })
    const results = await Promise.all([
      destination.deliver({
        type: 'track',
        userId: 'u1',
        event: 'Order Completed',
        properties: { orderId: 'o1', total: 'x' },
      }),
      destination.deliver({ type: 'track', userId: 'u1', event: 'Order Refunded', properties: {} }),
      destination.deliver({ type: 'identify', userId: 'u1', traits: { email: 'not an email' } }),
    ])
    await destination.close()
    expect(results.map((result) => result.urls[0]?.lastStatus)).toEqual([422, 422, 422])
    const fields = outcomes.map((outcome) => (outcome.ok ? 'ok' : `${outcome.reason} ${outcome.field}`)).sort()
    expect(fields).toEqual(['plan_violation event', 'plan_violation properties.total', 'plan_violation traits.email'])
    expect(outcomes.every((outcome) => !outcome.ok && (outcome.issues?.length ?? 0) > 0)).toBe(true)
  })

  it('tells a missing X-Signature, a bad one and a body that is not JSON apart, and never throws for them', async () => {
    const body =
      '{"type":"track","userId":"u1","timestamp":"2026-11-23T00:00:00.000Z","event":"Order Completed","properties":{"orderId":"o1","total":1}}'
    const request = (signature: string | undefined, data = body) =>
      new Request('http://receiver.test/hooks', {
        method: 'POST',
        headers: signature === undefined ? {} : { 'x-signature': signature },
        body: data,
      })
    expect(await verifyWebhook(request(undefined), { secrets: secret })).toEqual({
      ok: false,
      reason: 'missing_header',
      header: 'x-signature',
    })
    expect(await verifyWebhook(request(await signPayload(body, 'other')), { secrets: secret })).toEqual({
      ok: false,
      reason: 'bad_signature',
    })
    const notJson = 'not json'
    expect(await verifyWebhook(request(await signPayload(notJson, secret), notJson), { secrets: secret })).toEqual({
      ok: false,
      reason: 'malformed',
    })
    const invalidUtf8 = new Uint8Array([0x7b, 0xff, 0x7d])
    expect(
      await verifyWebhook(
        { headers: { 'x-signature': await signPayload(invalidUtf8, secret) }, body: invalidUtf8 },
        { secrets: secret },
      ),
    ).toEqual({ ok: false, reason: 'malformed' })
    // Without a plan: the payload as sent.
    const plain = await verifyWebhook(request(await signPayload(body, secret)), { secrets: secret })
    expect(plain).toMatchObject({ ok: true, payload: { type: 'track', properties: { total: 1 } } })
    // With the plan: the schema's output (its default filled in).
    const planned = await verifyWebhook(request(await signPayload(body, secret)), { secrets: secret, plan })
    expect(planned).toMatchObject({ ok: true, payload: { properties: { currency: 'EUR' } } })
  })

  it('refuses, as values, a schema that answers with a promise, and bodies that are not webhook payloads', async () => {
    const throwing = definePlan({
      events: {
        Tx: z.object({ a: z.string() }).refine((value) => {
          if (value.a === 'boom') throw new Error('boom')
          return true
        }),
      },
    })
    const signed = async (body: string, headers: Record<string, string> = {}) => ({
      headers: { 'X-Signature': await signPayload(body, secret), ...headers },
      body,
    })
    const tx =
      '{"version":1,"type":"track","userId":"u1","timestamp":"2026-11-23T00:00:00.000Z","context":{},"event":"Tx","properties":{"a":"boom"}}'
    // A header name as a hand-written object may spell it.
    expect(await verifyWebhook(await signed(tx), { secrets: secret, plan: throwing })).toMatchObject({
      ok: false,
      reason: 'plan_violation',
    })
    for (const body of [
      '{"type":"bogus"}',
      '{"type":"identify","userId":5,"timestamp":"t"}',
      '{"type":"track","userId":"u1"}',
    ]) {
      expect(await verifyWebhook(await signed(body), { secrets: secret })).toEqual({ ok: false, reason: 'malformed' })
    }
  })

  it('rejects a missing secret or a plan definePlan did not make: mistakes of the receiver, not of the sender', async () => {
    const request = new Request('http://receiver.test/hooks', { method: 'POST', body: '{}' })
    await expect(verifyWebhook(request, { secrets: '' })).rejects.toBeInstanceOf(OptionsError)
    await expect(verifyWebhook(request, { secrets: secret, plan: { events: { E: {} } } as never })).rejects.toThrow(
      /not a Standard Schema/,
    )
  })
})

describe('WebhookDestination with a plan', () => {
  it('delivers what follows it (the schema output) and refuses what does not, before any request', async () => {
    const { url, outcomes } = await receiver()
    const destination = new WebhookDestination({ webhooks: [{ url }], sharedSecret: secret, plan })
    const delivered = await destination.deliver({
      type: 'track',
      userId: 'u1',
      event: 'Order Completed',
      properties: { orderId: 'o1', total: 42 },
    })
    expect(delivered.status).toBe('delivered')
    await expect(
      destination.deliver({
        type: 'track',
        userId: 'u1',
        event: 'Order Completed',
        // @ts-expect-error: the plan's type for total
        properties: { orderId: 'o1', total: 'x' },
      }),
    ).rejects.toMatchObject({ code: 'ERR_PLAN_VIOLATION', field: 'properties.total' })
    // @ts-expect-error: an event the plan does not have
    await expect(destination.deliver({ type: 'track', userId: 'u1', event: 'Nope' })).rejects.toMatchObject({
      code: 'ERR_PLAN_VIOLATION',
      field: 'event',
    })
    // Types outside the plan are delivered as ever.
    expect((await destination.deliver({ type: 'page', userId: 'u1', name: 'Home' })).status).toBe('delivered')
    await destination.close()
    expect(outcomes).toHaveLength(2)
    const [first] = outcomes
    expect(first?.ok && first.payload.type === 'track' && first.payload.properties).toMatchObject({ currency: 'EUR' })
  })

  it("reads an event's fields once, its type too, and inherited ones as without a plan", async () => {
    const { url, outcomes } = await receiver()
    const destination = new WebhookDestination({ webhooks: [{ url }], sharedSecret: secret, plan })
    let reads = 0
    const shifty = {
      get type() {
        reads++
        return reads === 1 ? 'page' : 'track'
      },
      userId: 'u1',
      event: 'Not In Plan',
      properties: { total: 'x' },
    }
    const result = await destination.deliver(shifty as never)
    const inherited = Object.create({ type: 'page', userId: 'u1', name: 'Home' })
    const page = await destination.deliver(inherited)
    await destination.close()
    // Read once as a page, and delivered as the page it was read as.
    expect(reads).toBe(1)
    expect(result.status).toBe('delivered')
    expect(page.status).toBe('delivered')
    expect(outcomes.map((outcome) => outcome.ok && outcome.payload.type)).toEqual(['page', 'page'])
  })

  it("verifies a Request of any fetch implementation, not only this global's class", async () => {
    const { Request: UndiciRequest } = await import('undici')
    const body =
      '{"type":"identify","userId":"u1","timestamp":"2026-11-23T00:00:00.000Z","traits":{"email":"a@example.com"}}'
    const request = new UndiciRequest('http://receiver.test/hooks', {
      method: 'POST',
      headers: { 'x-signature': await signPayload(body, secret) },
      body,
    })
    expect(await verifyWebhook(request as unknown as Request, { secrets: secret, plan })).toMatchObject({ ok: true })
  })

  it('refuses a plan entry that is not a Standard Schema at construction', () => {
    expect(
      () =>
        new WebhookDestination({ webhooks: [{ url: 'http://127.0.0.1:9/' }], plan: { events: { E: {} } } as never }),
    ).toThrow(OptionsError)
  })
})
