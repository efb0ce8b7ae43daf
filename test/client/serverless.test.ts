import { describe, expect, it, vi } from 'vitest'
import { Client, OptionsError } from '../../src/index.js'
import { useSinks, type Sink } from '../helpers/sink.js'

const sink = useSinks()

const messagesIn = (server: Sink) => server.requests.flatMap((request) => JSON.parse(request.body).batch)

describe('waitUntil (serverless and edge)', () => {
  it('hands the flush of a tick to waitUntil during the first call, and sends that tick’s calls in one batch', async () => {
    const server = await sink()
    const handed: Array<Promise<unknown>> = []
    const client = new Client('key', { endpoint: server.url, waitUntil: (promise) => handed.push(promise) })
    client.track({ userId: 'u1', event: 'A' })
    // Registered inside the call, while the invocation is surely alive.
    expect(handed).toHaveLength(1)
    client.track({ userId: 'u1', event: 'B' })
    client.identify({ userId: 'u1' })
    expect(handed).toHaveLength(1)
    expect(server.requests).toHaveLength(0)
    await handed[0]
    // Settled means delivered: nothing left for a frozen function to lose.
    expect(server.requests).toHaveLength(1)
    expect(messagesIn(server).map((message: { event?: string }) => message.event)).toEqual(['A', 'B', undefined])
    expect(client.pending).toBe(0)

    client.track({ userId: 'u1', event: 'C' })
    expect(handed).toHaveLength(2)
    await handed[1]
    expect(server.requests).toHaveLength(2)
    await client.close()
  })

  it('does not wait for flushAt or flushAfter', async () => {
    const server = await sink()
    const handed: Array<Promise<unknown>> = []
    const client = new Client('key', {
      endpoint: server.url,
      flushAt: 1_000,
      flushAfter: 600_000,
      waitUntil: (promise) => handed.push(promise),
    })
    client.track({ userId: 'u1', event: 'A' })
    await handed[0]
    expect(messagesIn(server)).toHaveLength(1)
    await client.close()
  })

  it('reports a waitUntil that throws to the logger and still sends the call', async () => {
    const server = await sink()
    const logged: string[] = []
    const client = new Client('key', {
      endpoint: server.url,
      logger: { log: () => {}, error: (line) => logged.push(line) },
      waitUntil: () => {
        throw new Error('no request context')
      },
    })
    expect(client.track({ userId: 'u1', event: 'A' })).toBe(true)
    await client.flush()
    expect(messagesIn(server)).toHaveLength(1)
    expect(logged.join('\n')).toContain('no request context')
    await client.close()
  })

  it('reports a waitUntil whose returned promise rejects: never an unhandled rejection', async () => {
    const server = await sink()
    const logged: string[] = []
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const client = new Client('key', {
        endpoint: server.url,
        logger: { log: () => {}, error: (line) => logged.push(line) },
        waitUntil: async () => {
          throw new Error('rejected by the platform')
        },
      })
      expect(client.track({ userId: 'u1', event: 'A' })).toBe(true)
      await client.flush()
      await vi.waitFor(() => expect(logged.join('\n')).toContain('rejected by the platform'))
      expect(messagesIn(server)).toHaveLength(1)
      await client.close()
      // An unhandled rejection is reported after the microtasks that could have handled it.
      await new Promise((resolve) => setImmediate(resolve))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it('refuses a waitUntil that is not a function', () => {
    expect(() => new Client('key', { waitUntil: 'ctx' as never })).toThrow(OptionsError)
    expect(() => new Client('key', { waitUntil: 'ctx' as never })).toThrow(/waitUntil/)
  })
})
