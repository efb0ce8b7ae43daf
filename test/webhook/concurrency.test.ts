import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createHttp1Transport } from '../../src/webhook/node-only.js'
import type { WebhookDestinationBase } from '../../src/webhook/delivery/destination-base.js'
import { WebhookDestination, type WebhookTransport } from '../../src/webhook/index.js'
import { startSink, type Sink } from '../helpers/sink.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A receiver on 127.0.0.1 that answers nothing until `release()`, then 200 to everything. */
async function holdingReceiver(): Promise<{ url: string; held: () => number; release: () => void }> {
  const waiting: ServerResponse[] = []
  let open = false
  const answer = (response: ServerResponse) => response.writeHead(200).end()
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => (open ? answer(response) : waiting.push(response)))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/held`,
    held: () => waiting.length,
    release: () => {
      open = true
      for (const response of waiting.splice(0)) answer(response)
    },
  }
}

/** A transport that counts the requests it has in flight to each origin, and the most it ever had. */
function countingTransport(): { transport: WebhookTransport; most: Map<string, number> } {
  const inner = createHttp1Transport()
  const now = new Map<string, number>()
  const most = new Map<string, number>()
  const transport: WebhookTransport = {
    async send(request) {
      const count = (now.get(request.origin) ?? 0) + 1
      now.set(request.origin, count)
      most.set(request.origin, Math.max(most.get(request.origin) ?? 0, count))
      try {
        return await inner.send(request)
      } finally {
        now.set(request.origin, (now.get(request.origin) ?? 1) - 1)
      }
    },
    close: () => inner.close?.() ?? Promise.resolve(),
  }
  return { transport, most }
}

describe('maxConcurrencyPerUrl', () => {
  it('keeps at most maxConcurrencyPerUrl requests in flight to one URL, while other URLs get theirs', async () => {
    const slow = await holdingReceiver()
    let thirdArrived: () => void = () => {}
    const allThree = new Promise<void>((resolve) => (thirdArrived = resolve))
    const fast: Sink = await startSink((_request, index) => {
      if (index === 2) thirdArrived()
      return { status: 200 }
    })
    cleanups.push(() => fast.close())
    const { transport, most } = countingTransport()
    const destination: WebhookDestinationBase = new WebhookDestination({
      webhooks: [{ url: slow.url }, { url: fast.url }],
      mode: 'each',
      maxConcurrencyPerUrl: 1,
      transport,
    })
    cleanups.push(() => destination.close({ timeout: 1_000 }))
    const deliveries = ['a', 'b', 'c'].map((userId) => destination.deliver({ type: 'track', userId, event: 'E' }))
    // Every event's round sends to both URLs at once: once the fast URL has all three, each event has
    // asked for its place at the slow one too, and only one got it.
    await allThree
    expect(most.get(new URL(fast.url).origin)).toBeGreaterThanOrEqual(1)
    expect(most.get(new URL(slow.url).origin)).toBe(1)
    slow.release()
    const results = await Promise.all(deliveries)
    expect(results.map((result) => result.status)).toEqual(['delivered', 'delivered', 'delivered'])
    expect(most.get(new URL(slow.url).origin)).toBe(1)
  })
})

describe('maxConcurrency', () => {
  it('holds with more URLs than it has slots: each URL keeps one slot, and the URLs take turns for them', async () => {
    const slow = await holdingReceiver()
    let total = 0
    let most = 0
    const inner = createHttp1Transport()
    const transport: WebhookTransport = {
      async send(request) {
        most = Math.max(most, ++total)
        try {
          return await inner.send(request)
        } finally {
          total--
        }
      },
      close: () => inner.close?.() ?? Promise.resolve(),
    }
    const destination: WebhookDestinationBase = new WebhookDestination({
      webhooks: ['a', 'b', 'c'].map((path) => ({ url: `${slow.url}/${path}` })),
      mode: 'each',
      maxConcurrency: 2,
      transport,
    })
    cleanups.push(() => destination.close({ timeout: 1_000 }))
    const deliveries = ['a', 'b'].map((userId) => destination.deliver({ type: 'track', userId, event: 'E' }))
    await expect.poll(() => slow.held()).toBe(2)
    expect(total).toBe(2)
    slow.release()
    const results = await Promise.all(deliveries)
    expect(results.map((result) => result.status)).toEqual(['delivered', 'delivered'])
    expect(most).toBe(2)
  })
})
