// Waits and windows of the in-memory engine run on a monotonic clock: a step of the wall clock
// during a backoff (a VM restore, `date -s`, an NTP step) neither re-arms the retry for an hour
// nor ends the retry window early. The wall clock is stepped by shifting what `Date.now` returns,
// as the step does, while the real one goes on.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { WebhookDestination } from '../../src/webhook/index.js'
import { startSink, type Sink } from '../helpers/sink.js'

const HOUR = 3_600_000
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(open.splice(0).map((item) => item.close()))
})

/** A receiver that answers 503 to the first two requests and 200 after; `first` resolves when the first arrives. */
async function recovering(): Promise<{ sink: Sink; first: Promise<void> }> {
  let arrived: () => void = () => {}
  const first = new Promise<void>((resolve) => {
    arrived = resolve
  })
  const sink = await startSink((_, index) => {
    if (index === 0) arrived()
    return { status: index < 2 ? 503 : 200 }
  })
  open.push(sink)
  return { sink, first }
}

/** From now on, `Date.now()` reads `step` ms off the real time. */
function stepWallClock(step: number): void {
  const real = Date.now.bind(Date)
  vi.spyOn(Date, 'now').mockImplementation(() => real() + step)
}

describe.each([
  ['back by one hour', -HOUR],
  ['forward by five hours', 5 * HOUR],
])('a wall clock stepped %s during a backoff', (_, step) => {
  it('waits each retry for its backoff only, keeps the window, and the event is delivered', async () => {
    const { sink, first } = await recovering()
    const destination = new WebhookDestination({
      webhooks: [{ url: sink.url }],
      backoff: () => 200,
      retryWindowMs: 3_000,
    })
    open.push(destination)
    // The step comes once the retry is scheduled: its timer is armed on the clock before the step.
    const stepped = new Promise<void>((resolve) =>
      destination.once('retry', () =>
        setImmediate(() => {
          stepWallClock(step)
          resolve()
        }),
      ),
    )
    const delivering = destination.deliver({ type: 'track', userId: 'u1', event: 'E' })
    await first
    await stepped
    // On the wall clock, a step back would re-arm the retry for an hour (the test times out) and a
    // step forward would end the window at once (the event fails after its second attempt).
    const result = await delivering
    expect(result.status).toBe('delivered')
    expect(result.urls[0]).toMatchObject({ status: 'delivered', attempts: 3 })
    expect(sink.requests).toHaveLength(3)
  })
})
