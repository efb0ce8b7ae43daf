import { afterEach, describe, expect, it } from 'vitest'
import type { Client as FetchClient, ClientOptions, DeliveryErrorCode } from '../../src/index.js'
import { CLIENT_BUILDS } from '../helpers/builds.js'
import { startChaosSink, type ChaosAction, type ChaosSink } from '../helpers/chaos-sink.js'
import { freePort } from '../helpers/ports.js'

let sink: ChaosSink | undefined
afterEach(async () => {
  await sink?.close()
  sink = undefined
})

const ok: ChaosAction = { kind: 'answer', status: 200 }
const fast = { baseDelay: 20, maxDelay: 100 }

/**
 * Sends `count` messages and records every outcome the client reports: 'sent' per delivered
 * message, 'error' (with its code) per failed or dropped one.
 */
async function run(
  Client: typeof FetchClient,
  url: string,
  count: number,
  options: ClientOptions = {},
  closeTimeout = 30_000,
) {
  const client = new Client('key', { endpoint: url, flushAt: 10, retry: fast, ...options })
  const outcomes = new Map<string, Array<'sent' | DeliveryErrorCode>>()
  const note = (id: string, outcome: 'sent' | DeliveryErrorCode) =>
    outcomes.set(id, [...(outcomes.get(id) ?? []), outcome])
  client.on('sent', (info) => {
    for (const message of info.messages) note(message.messageId, 'sent')
  })
  client.on('error', (error) => {
    for (const message of error.messages) note(message.messageId, error.code)
  })
  const ids = Array.from({ length: count }, (_, index) => `m${index}`)
  for (const id of ids)
    client.track({
      userId: 'u1',
      event: 'Chaos',
      messageId: id,
      properties: { pad: 'x'.repeat(options.flushAt === 1 ? 0 : 200) },
    })
  const started = Date.now()
  await client.close({ timeout: closeTimeout })
  return { ids, outcomes, closedAfter: Date.now() - started }
}

/** Exact accounting: every message has exactly one outcome, and 'sent' ones are exactly those the sink accepted. */
function expectExactAccounting(result: Awaited<ReturnType<typeof run>>, accepted: string[]) {
  for (const id of result.ids) expect(result.outcomes.get(id), id).toHaveLength(1)
  const sent = result.ids.filter((id) => result.outcomes.get(id)?.[0] === 'sent')
  expect(new Set(accepted)).toEqual(new Set(sent))
}

describe.each(CLIENT_BUILDS)('the %s under faults (chaos sink on loopback)', (_build, Client) => {
  it('rides out a burst of 500s and 503s: everything delivered once, no duplicates', async () => {
    sink = await startChaosSink((index) => (index < 6 ? { kind: 'answer', status: index % 2 ? 500 : 503 } : ok))
    const result = await run(Client, sink.url, 50)
    expectExactAccounting(result, sink.accepted)
    expect(sink.accepted).toHaveLength(50)
    expect(new Set(sink.accepted).size).toBe(50)
  })

  it('waits out a 429 with Retry-After, then delivers everything', async () => {
    sink = await startChaosSink((index) =>
      index === 0 ? { kind: 'answer', status: 429, headers: { 'retry-after': '1' } } : ok,
    )
    const result = await run(Client, sink.url, 30)
    expectExactAccounting(result, sink.accepted)
    expect(sink.accepted).toHaveLength(30)
    expect(result.closedAfter).toBeGreaterThanOrEqual(950)
  })

  it('retries connections reset mid-request', async () => {
    sink = await startChaosSink((index) => (index < 3 ? { kind: 'reset' } : ok))
    const result = await run(Client, sink.url, 40)
    expectExactAccounting(result, sink.accepted)
    expect(sink.accepted).toHaveLength(40)
  })

  it('retries a response slower than the timeout', async () => {
    sink = await startChaosSink((index) => (index === 0 ? { kind: 'hang' } : ok))
    const result = await run(Client, sink.url, 20, { timeout: 300 })
    expectExactAccounting(result, sink.accepted)
    expect(sink.accepted).toHaveLength(20)
  })

  it('keeps retrying while the sink is down and delivers when it comes back', async () => {
    const port = await freePort()
    const client = run(Client, `http://127.0.0.1:${port}`, 30, { retry: { baseDelay: 50, maxDelay: 200, limit: 30 } })
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    sink = await startChaosSink(() => ok, port)
    const result = await client
    expectExactAccounting(result, sink.accepted)
    expect(sink.accepted).toHaveLength(30)
  })

  it('reports batches answered 413 as ERR_REJECTED with their messages, and delivers the rest', async () => {
    // Large bodies are refused; the client's first batch is flushAt (10) small messages, later ones grow.
    sink = await startChaosSink((_index, bytes) => (bytes > 5_000 ? { kind: 'answer', status: 413 } : ok))
    const client = new Client('key', { endpoint: sink.url, flushAt: 10, retry: fast })
    const rejected: string[] = []
    const reasons = new Set<string>()
    client.on('error', (error) => {
      reasons.add(`${error.code} ${error.status}`)
      rejected.push(...error.messages.map((message) => message.messageId))
    })
    const ids = Array.from({ length: 60 }, (_, index) => `m${index}`)
    for (const id of ids)
      client.track({ userId: 'u1', event: 'E', messageId: id, properties: { pad: 'x'.repeat(200) } })
    await client.close()
    expect(reasons).toEqual(new Set(['ERR_REJECTED 413']))
    expect(rejected.length).toBeGreaterThan(0)
    expect([...sink.accepted, ...rejected].sort()).toEqual([...ids].sort())
  })

  it('returns from close() within its timeout during a retry storm and reports what it could not send', async () => {
    sink = await startChaosSink(() => ({ kind: 'answer', status: 503 }))
    const result = await run(Client, sink.url, 40, { retry: { baseDelay: 100, maxDelay: 100, limit: 100 } }, 500)
    expect(result.closedAfter).toBeLessThan(3_000)
    expectExactAccounting(result, sink.accepted)
    expect(sink.accepted).toHaveLength(0)
    expect(new Set(result.ids.map((id) => result.outcomes.get(id)?.[0]))).toEqual(new Set(['ERR_CLOSE_TIMEOUT']))
  })
})
