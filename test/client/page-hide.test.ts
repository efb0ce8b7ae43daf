import { afterEach, describe, expect, it, vi } from 'vitest'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import { KEEPALIVE_MAX_BYTES } from '../../src/client/page-hide.js'
import { ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'

const { captured } = useBatchEndpoint()

/** A browser-like host: a document and a real EventTarget for window events. (The real browser run is in test/runtimes.) */
function browserLikeHost(): EventTarget {
  const window = new EventTarget()
  vi.stubGlobal('document', {})
  vi.stubGlobal('addEventListener', window.addEventListener.bind(window))
  vi.stubGlobal('removeEventListener', window.removeEventListener.bind(window))
  return window
}

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('pagehide in browsers', () => {
  it('sends everything queued with keepalive, in bodies within the keepalive quota', async () => {
    const window = browserLikeHost()
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushAt: 1_000 })
    const pad = 'x'.repeat(1_000)
    for (let index = 0; index < 150; index++) client.track({ userId: 'u1', event: 'E', properties: { index, pad } })
    expect(captured).toHaveLength(0)
    window.dispatchEvent(new Event('pagehide'))
    await client.flush()
    expect(captured.length).toBeGreaterThanOrEqual(3)
    for (const request of captured) {
      expect(request.keepalive).toBe(true)
      expect(new TextEncoder().encode(request.body).length).toBeLessThanOrEqual(KEEPALIVE_MAX_BYTES)
    }
    expect(captured.flatMap((request) => request.json.batch)).toHaveLength(150)
  })

  it('can be turned off, and stops listening after close()', async () => {
    const window = browserLikeHost()
    const off = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000, flushOnPageHide: false })
    off.track({ userId: 'u1', event: 'E' })
    const closed = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000 })
    await closed.close()
    window.dispatchEvent(new Event('pagehide'))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(captured).toHaveLength(0)
    expect(off.pending).toBe(1)
  })
})
