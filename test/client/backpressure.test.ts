import { HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { DeliveryError, type ClientOptions } from '../../src/index.js'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import { ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'

const { captured, respond } = useBatchEndpoint()

/** A client sending one message per request, one request at a time, to an endpoint that does not answer until `release()`. */
function stalledClient(bounds: Pick<ClientOptions, 'maxQueueSize' | 'maxQueueBytes' | 'highWaterMark'>) {
  let release: () => void = () => {}
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  respond.current = async () => {
    await gate
    return HttpResponse.json({})
  }
  const client = new Client('key', { endpoint: ENDPOINT, flushAt: 1, maxConcurrentRequests: 1, ...bounds })
  const errors: DeliveryError[] = []
  client.on('error', (error) => errors.push(error))
  return { client, errors, release }
}

describe('bounded memory and backpressure', () => {
  it('returns false from the call that fills the queue half way, then emits drain once it empties', async () => {
    const { client, release } = stalledClient({ maxQueueSize: 8 })
    const results = Array.from({ length: 4 }, (_, index) => client.track({ userId: 'u1', event: `E${index}` }))
    expect(results).toEqual([true, true, true, false])
    expect(client.needDrain).toBe(true)
    const drained = client.whenDrained()
    let drainEvents = 0
    client.on('drain', () => drainEvents++)
    release()
    await drained
    await client.flush()
    expect(drainEvents).toBe(1)
    expect(client.needDrain).toBe(false)
    expect(captured.flatMap((request) => request.json.batch)).toHaveLength(4)
  })

  it('counts in-flight messages against the bound, drops calls past it with ERR_QUEUE_FULL and keeps the rest', async () => {
    const { client, errors, release } = stalledClient({ maxQueueSize: 4 })
    const dropped = new Promise<DeliveryError | undefined>((resolve) => {
      for (let index = 0; index < 4; index++) client.track({ userId: 'u1', event: `Kept${index}` })
      expect(client.track({ userId: 'u1', event: 'Dropped', messageId: 'late' }, resolve)).toBe(false)
    })
    const error = await dropped
    expect(error).toBeInstanceOf(DeliveryError)
    expect(error?.code).toBe('ERR_QUEUE_FULL')
    expect(error?.messages.map((m) => m.messageId)).toEqual(['late'])
    expect(errors).toEqual([error])
    release()
    await client.flush()
    expect(captured.flatMap((request) => request.json.batch.map((m) => m['event']))).toEqual([
      'Kept0',
      'Kept1',
      'Kept2',
      'Kept3',
    ])
  })

  it('returns false from the call that reaches highWaterMark bytes, and drains at half of it', async () => {
    const { client, release } = stalledClient({ highWaterMark: 50_000 })
    const pad = 'x'.repeat(10_000)
    const results = Array.from({ length: 6 }, () => client.track({ userId: 'u1', event: 'E', properties: { pad } }))
    expect(results).toEqual([true, true, true, true, false, false])
    const drained = client.whenDrained()
    release()
    await drained
    expect(client.pending).toBeLessThanOrEqual(2)
    await client.flush()
    expect(captured.flatMap((request) => request.json.batch)).toHaveLength(6)
  })

  it('reports the calls dropped in one tick with one error that lists them all, and calls each callback', async () => {
    const { client, errors, release } = stalledClient({ maxQueueSize: 2 })
    client.track({ userId: 'u1', event: 'Kept' })
    client.track({ userId: 'u1', event: 'Kept' })
    const callbacks: string[] = []
    for (let index = 0; index < 1_000; index++) {
      client.track({ userId: 'u1', event: 'Dropped', messageId: `d${index}` }, (error) =>
        callbacks.push(error?.code ?? 'sent'),
      )
    }
    await Promise.resolve()
    expect(errors).toHaveLength(1)
    expect(errors[0]?.code).toBe('ERR_QUEUE_FULL')
    expect(errors[0]?.messages).toHaveLength(1_000)
    expect(callbacks).toEqual(Array(1_000).fill('ERR_QUEUE_FULL'))
    release()
    await client.flush()
    expect(captured.flatMap((request) => request.json.batch)).toHaveLength(2)
  })

  it('bounds bytes as well as count', async () => {
    const { client, errors, release } = stalledClient({ maxQueueBytes: 64_000 })
    const pad = 'x'.repeat(20_000)
    const accepted = Array.from({ length: 4 }, () => client.track({ userId: 'u1', event: 'E', properties: { pad } }))
    await Promise.resolve()
    expect(accepted).toEqual([true, false, false, false])
    expect(errors.map((error) => error.code)).toEqual(['ERR_QUEUE_FULL'])
    release()
    await client.flush()
    expect(captured.flatMap((request) => request.json.batch)).toHaveLength(3)
  })
})
