// The worker's side of fair queueing without Redis: what it reports and when, its sweep's timer,
// and what a failed report does (told, never thrown).
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  FAIR_WINDOW,
  FairQueueing,
  PARTIES_PER_SWEEP,
  SWEEP_MS,
  type FairStore,
} from '../../src/webhook/bullmq/fair-queueing.js'

const KEYS = {
  base: 'bull:q',
  wait: 'bull:q:wait',
  marker: 'bull:q:marker',
  meta: 'bull:q:meta',
  active: 'bull:q:active',
}

/** A store that records each script call by name, answering `reply` (or rejecting with it). */
function fakeStore(reply: () => Promise<unknown> = async () => 0) {
  const calls: Array<{ name: string; args: string[] }> = []
  const defined: string[] = []
  const store = {
    defineCommand(name: string) {
      defined.push(name)
      ;(store as unknown as Record<string, unknown>)[name] = (...args: string[]) => {
        calls.push({ name, args })
        return reply()
      }
    },
  } as FairStore
  return { store, calls, defined }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('FairQueueing', () => {
  it('defines its two scripts once per connection', () => {
    const { store, defined } = fakeStore()
    new FairQueueing(store, KEYS, () => undefined)
    new FairQueueing(store, KEYS, () => undefined)
    expect(defined).toHaveLength(2)
  })

  it('reports what was taken in one turn of the event loop in one call: the keys, the window, each id and its party', async () => {
    const { store, calls } = fakeStore()
    const fair = new FairQueueing(store, KEYS, () => undefined)
    fair.taken('dst-a/1', 'a')
    fair.taken('evt-2', '')
    expect(calls).toHaveLength(0)
    await fair.stop()
    expect(calls).toHaveLength(1)
    expect(calls[0]?.args).toEqual([
      KEYS.wait,
      KEYS.marker,
      KEYS.meta,
      KEYS.active,
      KEYS.base,
      String(FAIR_WINDOW),
      'dst-a/1',
      'a',
      'evt-2',
      '',
    ])
    // The next turn's takes are a report of their own.
    fair.taken('dst-a/3', 'a')
    await fair.stop()
    expect(calls.map((call) => call.args.slice(6))).toEqual([
      ['dst-a/1', 'a', 'evt-2', ''],
      ['dst-a/3', 'a'],
    ])
  })

  it('tells a failed report and goes on', async () => {
    const failure = new Error('READONLY')
    const { store } = fakeStore(async () => {
      throw failure
    })
    const told: Error[] = []
    const fair = new FairQueueing(store, KEYS, (error) => told.push(error))
    fair.taken('evt-1', '')
    await expect(fair.stop()).resolves.toBeUndefined()
    expect(told).toEqual([failure])
  })

  it(`sweeps every ${SWEEP_MS} ms once started, a sample of the parties, until stopped; a failed sweep is told`, async () => {
    vi.useFakeTimers()
    let fail = false
    const { store, calls } = fakeStore(async () => {
      if (fail) throw new Error('LOADING')
      return 3
    })
    const told: Error[] = []
    const fair = new FairQueueing(store, KEYS, (error) => told.push(error))
    await vi.advanceTimersByTimeAsync(SWEEP_MS)
    expect(calls).toHaveLength(0)
    fair.start()
    fair.start()
    await vi.advanceTimersByTimeAsync(SWEEP_MS - 1)
    expect(calls).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(calls).toHaveLength(1)
    expect(calls[0]?.args.slice(4)).toEqual([
      KEYS.base,
      String(FAIR_WINDOW),
      String(PARTIES_PER_SWEEP),
      String(SWEEP_MS),
    ])
    fail = true
    await vi.advanceTimersByTimeAsync(SWEEP_MS)
    expect(calls).toHaveLength(2)
    expect(told.map((error) => error.message)).toEqual(['LOADING'])
    await fair.stop()
    await vi.advanceTimersByTimeAsync(3 * SWEEP_MS)
    expect(calls).toHaveLength(2)
  })

  it('answers a sweep with how many events it moved up', async () => {
    const { store } = fakeStore(async () => 3)
    expect(await new FairQueueing(store, KEYS, () => undefined).sweep()).toBe(3)
  })
})
