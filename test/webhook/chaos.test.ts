import { afterEach, describe, expect, it } from 'vitest'
import { WebhookDestination, type RetryNotice } from '../../src/webhook/index.js'
import { startChaosSink, type ChaosAction, type ChaosSink } from '../helpers/chaos-sink.js'

const sinks: ChaosSink[] = []
afterEach(async () => {
  await Promise.all(sinks.splice(0).map((sink) => sink.close()))
})

async function receiver(script: (index: number) => ChaosAction): Promise<ChaosSink> {
  const sink = await startChaosSink(script)
  sinks.push(sink)
  return sink
}

const ok: ChaosAction = { kind: 'answer', status: 200 }

describe('webhook delivery under faults, several URLs failing differently', () => {
  it("mode 'any': retries while every URL fails, stops the moment one accepts", async () => {
    const flaky = await receiver((index) => (index < 2 ? { kind: 'answer', status: 500 } : ok))
    const resetting = await receiver(() => ({ kind: 'reset' }))
    const hanging = await receiver(() => ({ kind: 'hang' }))
    const destination = new WebhookDestination({
      webhooks: [{ url: flaky.url }, { url: resetting.url }, { url: hanging.url }],
      // Far longer than the flaky URL's three attempts take, even on a loaded machine.
      timeoutMs: 5_000,
      backoff: () => 20,
    })
    const notices: RetryNotice[] = []
    destination.on('retry', (notice) => notices.push(notice))
    const result = await destination.deliver({ type: 'identify', userId: 'u1', messageId: 'evt-1' })
    await destination.close({ timeout: 1_000 })
    expect(result.status).toBe('delivered')
    expect(result.attempts).toBe(3)
    expect(result.urls.map((url) => url.status)).toEqual(['delivered', 'superseded', 'superseded'])
    // Each URL on its own timeline: the hanging one (5 s an attempt) holds back neither the
    // flaky one (accepting on its third) nor the resetting one, and neither is retried after the
    // accept (at 20 ms a retry, the resetting one would otherwise be tried again and again).
    expect(flaky.requests).toBe(3)
    expect(resetting.requests).toBeGreaterThanOrEqual(1)
    expect(resetting.requests).toBeLessThanOrEqual(3)
    expect(hanging.requests).toBe(1)
    const codes = (url: string) => [
      ...new Set(notices.filter((notice) => notice.url.startsWith(url)).map((notice) => notice.error.code)),
    ]
    expect(codes(flaky.url)).toEqual(['ERR_HTTP_STATUS'])
    expect(codes(resetting.url)).toEqual(['ERR_NETWORK'])
    // Its only attempt was still in flight when the event ended: no retry was ever told for it.
    expect(codes(hanging.url)).toEqual([])
    expect(flaky.accepted).toEqual(['evt-1'])
  })

  it("mode 'each': every URL on its own, each ending delivered or failed with its own last error", async () => {
    const flaky = await receiver((index) => (index < 2 ? { kind: 'answer', status: 503 } : ok))
    const resetting = await receiver(() => ({ kind: 'reset' }))
    const gone = await receiver(() => ({ kind: 'answer', status: 410 }))
    const destination = new WebhookDestination({
      webhooks: [{ url: flaky.url }, { url: resetting.url }, { url: gone.url }],
      mode: 'each',
      retryWindowMs: 400,
      backoff: () => 50,
    })
    const result = await destination.deliver({ type: 'identify', userId: 'u1', messageId: 'evt-2' })
    await destination.close({ timeout: 1_000 })
    expect(result.status).toBe('failed')
    expect(result.urls.map((url) => [url.status, url.lastError?.code])).toEqual([
      ['delivered', undefined],
      ['failed', 'ERR_NETWORK'],
      ['failed', 'ERR_HTTP_STATUS'],
    ])
    expect(flaky.requests).toBe(3)
    expect(gone.requests).toBe(1)
    expect(resetting.requests).toBeGreaterThanOrEqual(3)
    expect(flaky.accepted).toEqual(['evt-2'])
  })
})
