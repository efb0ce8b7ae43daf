import { delay, HttpResponse } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import type { DeliveryError, ClientOptions } from '../../src/index.js'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import { ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'

const { captured, respond } = useBatchEndpoint()

function newClient(options: ClientOptions = {}): { client: Client; errors: DeliveryError[] } {
  const client = new Client('key', {
    endpoint: ENDPOINT,
    flushAfter: 60_000,
    retry: { baseDelay: 1, maxDelay: 5 },
    ...options,
  })
  const errors: DeliveryError[] = []
  client.on('error', (error) => errors.push(error))
  return { client, errors }
}

const status = (code: number, headers?: Record<string, string>) =>
  new HttpResponse('{}', { status: code, ...(headers ? { headers } : {}) })

describe('retries', () => {
  it.each([500, 502, 503, 504, 599, 408, 429])(
    'retries HTTP %i, then succeeds, resending the same body',
    async (code) => {
      respond.current = (index) => (index < 2 ? status(code) : status(200))
      const { client, errors } = newClient()
      const retries: number[] = []
      client.on('retry', (info) => retries.push(info.attempt))
      const outcome = new Promise<DeliveryError | undefined>((resolve) =>
        client.track({ userId: 'u1', event: 'E' }, resolve),
      )
      await client.flush()
      expect(captured).toHaveLength(3)
      expect(new Set(captured.map((request) => request.body)).size).toBe(1)
      expect(retries).toEqual([1, 2])
      expect(errors).toEqual([])
      expect(await outcome).toBeUndefined()
    },
  )

  it('retries network errors', async () => {
    respond.current = (index) => (index === 0 ? 'network' : status(200))
    const { client, errors } = newClient()
    client.track({ userId: 'u1', event: 'E' })
    await client.flush()
    expect(captured).toHaveLength(2)
    expect(errors).toEqual([])
  })

  it('retries a request that outlives the timeout', async () => {
    respond.current = async (index) => {
      if (index === 0) await delay(1_000)
      return status(200)
    }
    const { client, errors } = newClient({ timeout: 100 })
    client.track({ userId: 'u1', event: 'E' })
    await client.flush()
    expect(captured).toHaveLength(2)
    expect(errors).toEqual([])
  })

  it.each([400, 401, 403, 404, 413, 422])(
    'does not retry HTTP %i: one request, ERR_REJECTED with the messages',
    async (code) => {
      respond.current = () => status(code)
      const { client, errors } = newClient()
      const outcome = new Promise<DeliveryError | undefined>((resolve) =>
        client.track({ userId: 'u1', event: 'E', messageId: 'm1' }, resolve),
      )
      await client.flush()
      expect(captured).toHaveLength(1)
      expect(errors).toHaveLength(1)
      expect(errors[0]).toMatchObject({ code: 'ERR_REJECTED', status: code, attempts: 1 })
      expect(errors[0]?.messages.map((m) => m.messageId)).toEqual(['m1'])
      expect(JSON.parse(errors[0]?.messages[0]?.json ?? '')).toMatchObject({ event: 'E' })
      expect(await outcome).toBe(errors[0])
    },
  )

  it('gives up after retry.limit retries with ERR_RETRIES_EXHAUSTED, the cause kept', async () => {
    respond.current = () => status(503)
    const { client, errors } = newClient({ retry: { limit: 3, baseDelay: 1, maxDelay: 2 } })
    client.track({ userId: 'u1', event: 'E' })
    client.track({ userId: 'u2', event: 'E' })
    await client.flush()
    expect(captured).toHaveLength(4)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ code: 'ERR_RETRIES_EXHAUSTED', status: 503, attempts: 4 })
    expect(errors[0]?.messages).toHaveLength(2)
    expect(errors[0]?.cause).toBeInstanceOf(Error)
    expect(client.pending).toBe(0)
  })

  it('retries at least 10 times by default (Go v2 budget), with growing delays', async () => {
    respond.current = () => status(500)
    const { client, errors } = newClient({ retry: { baseDelay: 1, maxDelay: 8 } })
    client.track({ userId: 'u1', event: 'E' })
    await client.flush()
    expect(captured).toHaveLength(11)
    expect(errors[0]?.code).toBe('ERR_RETRIES_EXHAUSTED')
  })

  it('honours Retry-After on 429 for the batch that got it', async () => {
    respond.current = (index) => (index === 0 ? status(429, { 'Retry-After': '1' }) : status(200))
    const { client, errors } = newClient()
    client.track({ userId: 'u1', event: 'E' })
    await client.flush()
    expect(captured).toHaveLength(2)
    expect((captured[1]?.at ?? 0) - (captured[0]?.at ?? 0)).toBeGreaterThanOrEqual(950)
    expect(errors).toEqual([])
  })

  it('pauses every batch to the endpoint after a 429, not just the one that got it', async () => {
    respond.current = (index) => (index === 0 ? status(429, { 'Retry-After': '1' }) : status(200))
    const { client, errors } = newClient({ flushAt: 1, maxConcurrentRequests: 4 })
    client.track({ userId: 'u1', event: 'First' })
    await vi.waitFor(() => expect(captured).toHaveLength(1))
    await delay(50)
    client.track({ userId: 'u1', event: 'Second' })
    await client.flush()
    const second = captured.find((request) => request.json.batch[0]?.['event'] === 'Second')
    expect((second?.at ?? 0) - (captured[0]?.at ?? 0)).toBeGreaterThanOrEqual(950)
    expect(errors).toEqual([])
  })

  it('caps a long Retry-After at retry.maxRetryAfter', async () => {
    respond.current = (index) => (index === 0 ? status(429, { 'Retry-After': '3600' }) : status(200))
    const { client } = newClient({ retry: { maxRetryAfter: 200, baseDelay: 1 } })
    client.track({ userId: 'u1', event: 'E' })
    const started = Date.now()
    await client.flush()
    expect(captured).toHaveLength(2)
    expect(Date.now() - started).toBeLessThan(3_000)
  })
})
