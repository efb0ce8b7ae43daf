import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFetchTransport, WebhookDestination, type WebhookTransport } from '../../src/webhook/index.js'
import { createHttp1Transport } from '../../src/webhook/network/http1-transport.js'
import { certificates } from '../helpers/certs.js'
import { startSink, type Sink } from '../helpers/sink.js'

const certificate = certificates.selfSigned
let sink: Sink

beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }), { tls: certificate })
})
afterAll(async () => {
  await sink.close()
})

describe('HTTPS receivers', () => {
  it.each<[string, () => WebhookTransport]>([
    ['eventwire HTTP/1.1 (the Node default)', () => createHttp1Transport()],
    ['fetch', () => createFetchTransport()],
  ])(
    'refuses a self-signed certificate over %s: ERR_TLS_CERTIFICATE, not retried, no request reaches it',
    async (_name, transport) => {
      const destination = new WebhookDestination({
        webhooks: [{ url: `${sink.url}/in` }],
        transport: transport(),
        backoff: () => 10,
      })
      const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'E' })
      await destination.close()
      expect(result.status).toBe('failed')
      expect(result.urls[0]).toMatchObject({ status: 'failed', attempts: 1, lastStatus: undefined })
      expect(result.urls[0]?.lastError?.code).toBe('ERR_TLS_CERTIFICATE')
      expect(result.urls[0]?.lastError?.message).toMatch(/self-signed/)
      expect(sink.requests).toHaveLength(0)
    },
  )

  it('delivers to a receiver behind a private CA when the transport is told to trust it', async () => {
    const destination = new WebhookDestination({
      webhooks: [{ url: `${sink.url}/in` }],
      transport: createHttp1Transport({ tls: { ca: certificate.cert } }),
    })
    const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'E' })
    await destination.close()
    expect(result.status).toBe('delivered')
    expect(sink.requests).toHaveLength(1)
  })

  it.each([
    ['an expired certificate', certificates.expired],
    ['a certificate for another host name', certificates.wrongHost],
  ])('refuses %s from a trusted CA: ERR_TLS_CERTIFICATE, no request reaches it', async (_name, leaf) => {
    const faulty = await startSink(() => ({ status: 200 }), { tls: leaf })
    try {
      const destination = new WebhookDestination({
        webhooks: [{ url: `${faulty.url}/in` }],
        transport: createHttp1Transport({ tls: { ca: certificates.ca } }),
      })
      const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'E' })
      await destination.close()
      expect(result.urls[0]).toMatchObject({ status: 'failed', attempts: 1 })
      expect(result.urls[0]?.lastError?.code).toBe('ERR_TLS_CERTIFICATE')
      expect(
        String((result.urls[0]?.lastError?.cause as Error | undefined)?.message ?? '') +
          result.urls[0]?.lastError?.message,
      ).toMatch(/expired|another host|altnames|Hostname/i)
      expect(faulty.requests).toHaveLength(0)
    } finally {
      await faulty.close()
    }
  })
})
