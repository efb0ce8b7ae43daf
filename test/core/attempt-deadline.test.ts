import { describe, expect, it, vi } from 'vitest'
import { startDeadline } from '../../src/core/attempt-deadline.js'
import { BodyDrains } from '../../src/core/body-drains.js'

describe('startDeadline', () => {
  it('aborts its signal with a TimeoutError naming the limit once the time has passed, and says so', async () => {
    const deadline = startDeadline(20)
    expect(deadline.expired()).toBe(false)
    await vi.waitFor(() => expect(deadline.signal.aborted).toBe(true))
    expect(deadline.expired()).toBe(true)
    expect(deadline.signal.reason).toMatchObject({ name: 'TimeoutError', message: 'no complete answer within 20 ms' })
  })

  it('never fires once ended; cancel() aborts at once with an AbortError and is not a timeout', async () => {
    const ended = startDeadline(10)
    ended.end()
    const cancelled = startDeadline(60_000)
    cancelled.cancel()
    expect(cancelled.signal.reason).toMatchObject({ name: 'AbortError', message: 'the transport was closed' })
    expect(cancelled.expired()).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(ended.signal.aborted).toBe(false)
    expect(ended.expired()).toBe(false)
  })
})

describe('BodyDrains', () => {
  it('ends the deadline when the drain settles, and cancels the drains still running on cancelAll()', async () => {
    const drains = new BodyDrains()
    const settled = startDeadline(60_000)
    const endSettled = vi.spyOn(settled, 'end')
    drains.start(settled, () => Promise.reject(new Error('body failed')))
    await vi.waitFor(() => expect(endSettled).toHaveBeenCalled())
    const running = startDeadline(60_000)
    drains.start(running, () => new Promise(() => {}))
    drains.cancelAll()
    expect(running.signal.aborted).toBe(true)
    expect(settled.signal.aborted).toBe(false)
  })

  it('keeps track of the running drains whatever order they finish in', async () => {
    const drains = new BodyDrains()
    const finish: Array<() => void> = []
    const deadlines = Array.from({ length: 5 }, () => startDeadline(60_000))
    for (const deadline of deadlines) drains.start(deadline, () => new Promise<void>((resolve) => finish.push(resolve)))
    // The middle one, the last one, the first one: each removal moves another into its place.
    for (const index of [2, 4, 0]) finish[index]?.()
    await new Promise((resolve) => setTimeout(resolve, 0))
    drains.cancelAll()
    expect(deadlines.map((deadline) => deadline.signal.aborted)).toEqual([false, true, false, true, false])
    // Finishing after the cancel changes nothing.
    finish[1]?.()
    await new Promise((resolve) => setTimeout(resolve, 0))
    drains.cancelAll()
  })
})
