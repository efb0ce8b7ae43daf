import { afterEach, describe, expect, it, vi } from 'vitest'
import { RESPONSE_BODY_CAP as RESPONSE_READ_BYTES } from '../../src/core/limits.js'
import { answer, fakeEndpoint } from '../helpers/fake-endpoint.js'

/** A response whose body is `chunks` chunks of 4 KiB, handed out one per read, with what was read and whether it was cancelled. */
function countedBody(status: number, chunks: number) {
  const seen = { pulled: 0, cancelled: false }
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (seen.pulled === chunks) return new Promise<void>(() => undefined)
        seen.pulled++
        controller.enqueue(new Uint8Array(4 * 1024))
        return undefined
      },
      cancel() {
        seen.cancelled = true
      },
    },
    { highWaterMark: 0 },
  )
  return { response: new Response(body, { status }), seen }
}

describe('response bodies', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it(`reads a 2xx body of up to ${RESPONSE_READ_BYTES / 1024} KiB to its end, so the connection can be reused`, async () => {
    const { response, seen } = countedBody(200, RESPONSE_READ_BYTES / (4 * 1024))
    const { send } = fakeEndpoint(() => response)
    expect(await send('b')).toMatchObject({ ok: true, status: 200 })
    expect(seen.pulled).toBe(RESPONSE_READ_BYTES / (4 * 1024))
  })

  it('lets go of the body of each response it retries (cancels it), so no connection is held by it', async () => {
    const failed = [countedBody(503, 4), countedBody(500, 4)]
    const { send } = fakeEndpoint((index) => failed[index]?.response ?? answer(200), { baseDelay: 1, maxDelay: 1 })
    expect(await send('b')).toMatchObject({ ok: true, attempts: 3 })
    await vi.waitFor(() => expect(failed.map(({ seen }) => seen.cancelled)).toEqual([true, true]))
  })

  it('gives the body of a 2xx what is left of the attempt timeout after the headers, then lets it go and counts the batch delivered', async () => {
    vi.useFakeTimers()
    const started = Date.now()
    const { response, seen } = countedBody(200, 1)
    // Headers after 6 s of the 10 s attempt timeout, then a body that never ends.
    const { send } = fakeEndpoint(() => new Promise((resolve) => setTimeout(() => resolve(response), 6_000)))
    const sending = send('b')
    await vi.runAllTimersAsync()
    expect(await sending).toMatchObject({ ok: true, status: 200, attempts: 1 })
    expect(Date.now() - started).toBe(10_000)
    expect(seen.cancelled).toBe(true)
  })
})
