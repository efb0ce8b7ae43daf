import { describe, expect, it } from 'vitest'
import { keepDelivered, type StoredState, type StoredTarget } from '../../src/webhook/bullmq/job-data.js'
import { newDeliveryState } from '../../src/webhook/delivery/state.js'
import type { Endpoint } from '../../src/webhook/network/endpoint.js'

const endpoint = (url: string) => ({ url }) as unknown as Endpoint
const stored = (targets: Array<[url: string, status: StoredTarget['status']]>): StoredState => ({
  eventId: 'e1',
  deadline: 1,
  rounds: 3,
  targets: targets.map(([url, status]) => ({
    url,
    status,
    attempts: 2,
    lastStatus: undefined,
    retryAfterMs: undefined,
    failure: undefined,
  })) as unknown as StoredTarget[],
})

describe('keepDelivered: a dead letter run again', () => {
  it('keeps the URLs that took it delivered, matched by URL, the k-th of a URL listed twice by the k-th stored', () => {
    const fresh = newDeliveryState(
      'e1',
      ['https://a/', 'https://b/', 'https://a/', 'https://c/'].map(endpoint),
      1_000,
      0,
    )
    const state = keepDelivered(
      fresh,
      stored([
        ['https://a/', 'delivered'],
        ['https://b/', 'failed'],
        ['https://a/', 'failed'],
        ['https://gone/', 'delivered'],
      ]),
    )
    expect(state.targets.map((target) => target.status)).toEqual(['delivered', 'pending', 'pending', 'pending'])
    // A fresh window and fresh counts, whatever the stored state had.
    expect([state.deadline, state.rounds, state.targets[1]?.attempts]).toEqual([1_000, 0, 0])
  })

  it('leaves a fresh state as it is without a stored one', () => {
    const fresh = newDeliveryState('e1', [endpoint('https://a/')], 1_000, 0)
    expect(keepDelivered(fresh, undefined).targets[0]?.status).toBe('pending')
  })
})
