import { Webhook as StandardWebhook } from 'standardwebhooks'
import { Webhook as SvixWebhook } from 'svix'
import { describe, expect, it } from 'vitest'
import { createNodeSigner } from '../../src/webhook/signing/node-signer.js'
import { createWebCryptoSigner } from '../../src/webhook/signing/signer.js'
import { signedContent, standardKey } from '../../src/webhook/signing/standard-webhooks.js'
import {
  generateStandardSecret,
  OptionsError,
  ValidationError,
  verifySignature,
  verifyWebhook,
  WebhookDestination,
} from '../../src/webhook/index.js'
import { STANDARD_VECTOR } from '../runtimes/standard-webhooks-vector.mjs'
import { startSink, type ReceivedRequest } from '../helpers/sink.js'

const secret = generateStandardSecret()
const event = { type: 'track', userId: 'u1', event: 'Order Completed', properties: { total: 42 } } as const

/** Headers as the receiving libraries take them: a plain object of strings. */
function headersOf(request: ReceivedRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]))
}

async function deliverOnce(settings: Record<string, unknown>, message: Record<string, unknown> = event) {
  const sink = await startSink(() => ({ status: 204 }))
  const destination = new WebhookDestination({ webhooks: [{ url: sink.url }], ...settings })
  try {
    const result = await destination.deliver(message as never)
    expect(result.status).toBe('delivered')
    return sink.requests[0] as ReceivedRequest
  } finally {
    await destination.close()
    await sink.close()
  }
}

describe('Standard Webhooks signing', () => {
  it("gives the specification libraries' published signature, on node:crypto and on Web Crypto", async () => {
    const content = signedContent(STANDARD_VECTOR.id, STANDARD_VECTOR.timestamp, STANDARD_VECTOR.body)
    const key = standardKey(STANDARD_VECTOR.secret)
    expect(`v1,${await createNodeSigner('sha256-base64', key)(content)}`).toBe(STANDARD_VECTOR.signature)
    expect(`v1,${await createWebCryptoSigner('sha256-base64', key)(content)}`).toBe(STANDARD_VECTOR.signature)
  })

  it('verifies the published vector with verifyWebhook at its own time, and refuses it as a replay now', async () => {
    const delivery = {
      headers: {
        'webhook-id': STANDARD_VECTOR.id,
        'webhook-timestamp': STANDARD_VECTOR.timestamp,
        'webhook-signature': STANDARD_VECTOR.signature,
      },
      body: STANDARD_VECTOR.body,
    }
    // The body is not a webhook payload of ours, so a verified signature ends as malformed; a
    // stale one never gets that far.
    const then = Number(STANDARD_VECTOR.timestamp) * 1000
    const age = Math.ceil((Date.now() - then) / 1000)
    expect(await verifyWebhook(delivery, { secrets: STANDARD_VECTOR.secret, toleranceSeconds: age + 60 })).toEqual({
      ok: false,
      reason: 'malformed',
    })
    expect(await verifyWebhook(delivery, { secrets: STANDARD_VECTOR.secret })).toEqual({
      ok: false,
      reason: 'timestamp_too_old',
    })
  })

  it('sends webhook-id (the event id), webhook-timestamp (now) and webhook-signature, and no X-Signature', async () => {
    const before = Math.floor(Date.now() / 1000)
    const request = await deliverOnce({ standardSecret: secret }, { ...event, messageId: 'evt-1' })
    const after = Math.floor(Date.now() / 1000)
    expect(request.headers['webhook-id']).toBe('evt-1')
    expect(Number(request.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before)
    expect(Number(request.headers['webhook-timestamp'])).toBeLessThanOrEqual(after)
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    expect(request.headers['x-signature']).toBeUndefined()
  })

  it('is verified by the standardwebhooks package, by svix and by verifyWebhook', async () => {
    const request = await deliverOnce({ standardSecret: secret })
    const headers = headersOf(request)
    expect(new StandardWebhook(secret).verify(request.body, headers)).toMatchObject({ type: 'track', userId: 'u1' })
    expect(new SvixWebhook(secret).verify(request.body, headers)).toMatchObject({ event: 'Order Completed' })
    expect(await verifyWebhook({ headers: request.headers, body: request.raw }, { secrets: secret })).toMatchObject({
      ok: true,
      payload: { type: 'track', properties: { total: 42 } },
    })
  })

  it('verifies with verifyWebhook what the standardwebhooks package and svix sign', async () => {
    const body = JSON.stringify({ type: 'track', userId: 'u1', timestamp: new Date().toISOString(), event: 'E' })
    const now = new Date()
    for (const signer of [new StandardWebhook(secret), new SvixWebhook(secret)]) {
      const delivery = {
        headers: {
          'webhook-id': 'msg_1',
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signer.sign('msg_1', now, body),
        },
        body,
      }
      expect(await verifyWebhook(delivery, { secrets: secret })).toMatchObject({ ok: true, payload: { event: 'E' } })
      const tampered = { ...delivery, body: body.replace('"E"', '"F"') }
      expect(await verifyWebhook(tampered, { secrets: secret })).toEqual({ ok: false, reason: 'bad_signature' })
    }
  })

  it('with both schemes, serves receivers of each: X-Signature with verifySignature, Standard Webhooks with the libraries', async () => {
    const request = await deliverOnce({ sharedSecret: 's3cret', standardSecret: secret })
    expect(await verifySignature(request.raw, request.headers['x-signature'], 's3cret')).toBe(true)
    expect(new StandardWebhook(secret).verify(request.body, headersOf(request))).toMatchObject({ type: 'track' })
    const delivery = { headers: request.headers, body: request.raw }
    expect(await verifyWebhook(delivery, { secrets: 's3cret' })).toMatchObject({ ok: true })
    expect(await verifyWebhook(delivery, { secrets: secret })).toMatchObject({ ok: true })
    // A receiver on Standard Webhooks does not fall back to X-Signature (which has no replay protection).
    const stripped = { ...request.headers }
    delete stripped['webhook-signature']
    expect(await verifyWebhook({ headers: stripped, body: request.raw }, { secrets: secret })).toEqual({
      ok: false,
      reason: 'missing_header',
      header: 'webhook-signature',
    })
  })

  it('signs each retry afresh with its own time, under the same webhook-id', async () => {
    const sink = await startSink((_request, index) => ({ status: index === 0 ? 503 : 204 }))
    // Over a second apart, so that the two timestamps differ.
    const destination = new WebhookDestination({
      webhooks: [{ url: sink.url }],
      standardSecret: secret,
      backoff: () => 1_100,
    })
    try {
      expect((await destination.deliver(event)).status).toBe('delivered')
    } finally {
      await destination.close()
      await sink.close()
    }
    const [first, second] = sink.requests as [ReceivedRequest, ReceivedRequest]
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id'])
    expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThan(Number(first.headers['webhook-timestamp']))
    expect(second.headers['webhook-signature']).not.toBe(first.headers['webhook-signature'])
    expect(second.body).toBe(first.body)
    for (const request of [first, second]) {
      expect(new StandardWebhook(secret).verify(request.body, headersOf(request))).toMatchObject({ type: 'track' })
    }
  })

  it('signs each request as it leaves, not when its round began: a request that waited for its slot is not stale', async () => {
    // One request at a time to the URL, each held 2.2 s: the second waits for the first.
    const sink = await startSink(() => ({ status: 204, delayMs: 2_200 }))
    const destination = new WebhookDestination({
      webhooks: [{ url: sink.url }],
      standardSecret: secret,
      maxConcurrencyPerUrl: 1,
    })
    try {
      const results = await Promise.all([destination.deliver(event), destination.deliver(event)])
      expect(results.map((result) => result.status)).toEqual(['delivered', 'delivered'])
    } finally {
      await destination.close()
      await sink.close()
    }
    for (const request of sink.requests) {
      const lag = Math.floor(request.at / 1000) - Number(request.headers['webhook-timestamp'])
      expect(lag).toBeLessThanOrEqual(1)
    }
    expect(sink.requests).toHaveLength(2)
  })

  it('during a rotation signs with every secret, so receivers holding only the old or only the new one verify', async () => {
    const old = generateStandardSecret()
    const request = await deliverOnce({ standardSecret: [old, secret], sharedSecret: ['x-old', 'x-new'] })
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2)
    const delivery = { headers: request.headers, body: request.raw }
    for (const held of [old, secret]) {
      expect(new StandardWebhook(held).verify(request.body, headersOf(request))).toMatchObject({ type: 'track' })
      expect(await verifyWebhook(delivery, { secrets: held })).toMatchObject({ ok: true })
    }
    // X-Signature: one hex signature per secret, comma-separated; verifyWebhook takes any.
    expect(request.headers['x-signature']).toMatch(/^[0-9a-f]{40},[0-9a-f]{40}$/)
    for (const held of ['x-old', 'x-new']) {
      expect(await verifyWebhook(delivery, { secrets: held })).toMatchObject({ ok: true })
    }
    expect(await verifyWebhook(delivery, { secrets: 'x-other' })).toEqual({ ok: false, reason: 'bad_signature' })
    // A receiver holding both (its own rotation) verifies too.
    expect(await verifyWebhook(delivery, { secrets: [generateStandardSecret(), secret] })).toMatchObject({ ok: true })
  })

  it('refuses a replay after the tolerance and accepts a skewed clock within it', async () => {
    const body = JSON.stringify({ type: 'identify', userId: 'u1', timestamp: new Date().toISOString(), traits: {} })
    const signer = new StandardWebhook(secret)
    const at = (offsetSeconds: number) => {
      const time = new Date(Date.now() + offsetSeconds * 1000)
      return {
        headers: {
          'webhook-id': 'msg_1',
          'webhook-timestamp': String(Math.floor(time.getTime() / 1000)),
          'webhook-signature': signer.sign('msg_1', time, body),
        },
        body,
      }
    }
    expect(await verifyWebhook(at(-310), { secrets: secret })).toEqual({ ok: false, reason: 'timestamp_too_old' })
    expect(await verifyWebhook(at(310), { secrets: secret })).toEqual({ ok: false, reason: 'timestamp_too_new' })
    expect(await verifyWebhook(at(-290), { secrets: secret })).toMatchObject({ ok: true })
    expect(await verifyWebhook(at(290), { secrets: secret })).toMatchObject({ ok: true })
    expect(await verifyWebhook(at(-70), { secrets: secret, toleranceSeconds: 60 })).toEqual({
      ok: false,
      reason: 'timestamp_too_old',
    })
    // A stale timestamp is told only for a delivery a secret holder signed.
    expect(await verifyWebhook(at(-310), { secrets: generateStandardSecret() })).toEqual({
      ok: false,
      reason: 'bad_signature',
    })
  })

  it('names a missing or malformed header, and ignores signatures of other versions', async () => {
    const request = await deliverOnce({ standardSecret: secret })
    const verify = (headers: Record<string, unknown>) =>
      verifyWebhook({ headers: headers as Record<string, string>, body: request.raw }, { secrets: secret })
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const headers: Record<string, unknown> = { ...request.headers }
      delete headers[name]
      expect(await verify(headers)).toEqual({ ok: false, reason: 'missing_header', header: name })
    }
    for (const timestamp of ['soon', '-5', '1.5', '']) {
      const result = await verify({ ...request.headers, 'webhook-timestamp': timestamp })
      expect(result).toMatchObject({ ok: false })
    }
    expect(await verify({ ...request.headers, 'webhook-timestamp': 'soon' })).toEqual({
      ok: false,
      reason: 'malformed_header',
      header: 'webhook-timestamp',
    })
    const signature = String(request.headers['webhook-signature'])
    expect(await verify({ ...request.headers, 'webhook-signature': signature.replace('v1,', 'v1a,') })).toEqual({
      ok: false,
      reason: 'bad_signature',
    })
    expect(await verify({ ...request.headers, 'webhook-signature': `v2,xyz ${signature}` })).toMatchObject({ ok: true })
    // A repeated header, given as an array, reads as Node joins one: ", " between the values.
    expect(await verify({ ...request.headers, 'webhook-id': ['a', 'b'] })).toEqual({
      ok: false,
      reason: 'bad_signature',
    })
    expect(await verify({ ...request.headers, 'webhook-signature': ['v1,bad', signature] })).toMatchObject({ ok: true })
  })

  it('refuses, as values, headers that are missing altogether, not strings, or unreadable', async () => {
    const body = '{}'
    const throwing = {
      get 'webhook-id'(): string {
        throw new Error('a getter that throws')
      },
    }
    for (const scheme of ['standard', 'x-signature'] as const) {
      const options = { secrets: secret, scheme }
      for (const headers of [
        undefined,
        null,
        { 'x-signature': 5, 'webhook-id': 5 },
        { 'x-signature': [5] },
        throwing,
      ]) {
        const verified = await verifyWebhook({ headers, body } as never, options)
        expect(verified.ok).toBe(false)
      }
      const getter = {
        get: () => {
          throw new Error('get threw')
        },
      }
      expect((await verifyWebhook({ headers: getter, body } as never, options)).ok).toBe(false)
    }
  })

  it('refuses at once an event id with a dot, which the scheme cannot carry, and only under it', async () => {
    const destination = new WebhookDestination({ webhooks: [{ url: 'http://127.0.0.1:9/' }], standardSecret: secret })
    const refusal = await destination.deliver({ ...event, messageId: 'a.b' }).catch((error: unknown) => error)
    await destination.close()
    expect(refusal).toBeInstanceOf(ValidationError)
    expect(refusal).toMatchObject({ code: 'ERR_INVALID_FIELD', field: 'messageId' })
    expect((refusal as Error).message).toMatch(/contains a "\."/)
    const request = await deliverOnce({ sharedSecret: 's3cret' }, { ...event, messageId: 'a.b' })
    expect(request.headers['webhook-id']).toBe('a.b')
  })

  it("picks the scheme from the receiver's secrets unless told, and refuses secrets that cannot serve it", async () => {
    const request = await deliverOnce({ sharedSecret: secret })
    const delivery = { headers: request.headers, body: request.raw }
    // A whsec_ secret means Standard Webhooks, whose headers this X-Signature delivery lacks
    // (webhook-id goes with every delivery)...
    expect(await verifyWebhook(delivery, { secrets: secret })).toEqual({
      ok: false,
      reason: 'missing_header',
      header: 'webhook-timestamp',
    })
    // ...unless the receiver says it checks X-Signature (keyed with the secret as written).
    expect(await verifyWebhook(delivery, { secrets: secret, scheme: 'x-signature' })).toMatchObject({ ok: true })
    await expect(verifyWebhook(delivery, { secrets: 's3cret', scheme: 'standard' })).rejects.toBeInstanceOf(
      OptionsError,
    )
    await expect(verifyWebhook(delivery, { secrets: [] })).rejects.toThrow(/secrets/)
    await expect(verifyWebhook(delivery, { secrets: secret, toleranceSeconds: -1 })).rejects.toThrow(/toleranceSeconds/)
    await expect(verifyWebhook(delivery, { secrets: secret, scheme: 'svix' as never })).rejects.toThrow(/scheme/)
  })

  it('generates secrets of 32 random bytes that the libraries accept', () => {
    const generated = generateStandardSecret()
    expect(generated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(standardKey(generated)).toHaveLength(32)
    expect(generateStandardSecret()).not.toBe(generated)
    expect(() => new StandardWebhook(generated)).not.toThrow()
  })
})
