// What anything with Redis access can write into a queue's jobs, and what eventwire makes of it:
// every such job fails once, into the dead-letter list, and nothing loops or throws.
import { afterEach, describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/core/errors/validation-error.js'
import { WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Sink } from '../helpers/sink.js'

const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})

let queues = 0
/** A queue, and the Redis key of a job in it as BullMQ lays it out: `{prefix}:{name}:{jobId}`, a hash. */
function queue(): { producer: WebhookQueue; name: string; key: (jobId: string) => string } {
  const name = `adversarial-${++queues}`
  const producer = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.server.port }, name })
  open.push(producer)
  return { producer, name, key: (jobId) => `bull:${name}:${jobId}` }
}

async function worker(name: string, url: string): Promise<{ hub: WebhookWorker; errors: Error[] }> {
  const hub = new WebhookWorker(
    { webhooks: [{ url }], backoff: () => 50 },
    {
      connection: { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null },
      name,
      lockDuration: 1_000,
      stalledInterval: 500,
    },
  )
  const errors: Error[] = []
  hub.on('error', (error) => errors.push(error))
  open.push(hub)
  await hub.ready()
  return { hub, errors }
}

async function receiver(): Promise<Sink> {
  const sink = await startSink()
  open.push(sink)
  return sink
}

describe.runIf(redis.available)('jobs whose data in Redis is not what eventwire wrote', () => {
  it('fails a job whose data is not JSON once, lists it as a dead letter, and refuses to re-drive it', async () => {
    const sink = await receiver()
    const { producer, name, key } = queue()
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'garbled' })
    await producer.enqueue({ type: 'identify', userId: 'u2', messageId: 'fine' })
    await redis.raw.hset(key('evt-garbled'), 'data', '{"eventId": "garbled", "body": ')
    const { errors } = await worker(name, sink.url)

    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(1)
    await expect.poll(() => sink.requests.length, { timeout: 10_000 }).toBe(1)
    expect(sink.requests[0]?.headers['webhook-id']).toBe('fine')
    const letters = await producer.deadLetters()
    expect(letters).toHaveLength(1)
    expect(letters[0]).toMatchObject({ eventId: 'garbled', urls: [] })
    expect(letters[0]?.unreadable).toMatch(/not JSON/)
    expect(letters[0]?.reason).toMatch(/^ERR_INVALID_FIELD: .*not JSON/)
    // Once, finally: not taken again as stalled.
    expect(Number((await redis.raw.hget(key('evt-garbled'), 'stc')) ?? 0)).toBe(0)
    expect(errors).toEqual([])

    const refusal = await producer.redrive('garbled').catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(ValidationError)
    expect((refusal as ValidationError).message).toMatch(/cannot be re-driven.*not JSON/)
  })

  it.each([
    ['a JSON value that is not an object', '42'],
    ['no body', '{"eventId":"odd"}'],
    ['a body that is not a string', '{"eventId":"odd","body":{"type":"track"}}'],
    ['another event id than the job id says', '{"eventId":"other","body":"{}"}'],
    [
      'a state of the wrong shape',
      '{"eventId":"odd","body":"{}","state":{"eventId":"odd","deadline":"soon","rounds":1,"targets":[]}}',
    ],
    [
      'targets that are not URL states',
      '{"eventId":"odd","body":"{}","state":{"eventId":"odd","deadline":1,"rounds":1,"targets":[null]}}',
    ],
    ['an empty string', ''],
    ['megabytes of garbage', 'x'.repeat(4_000_000)],
  ])('fails a job whose data has %s, without sending anything', async (_case, data) => {
    const sink = await receiver()
    const { producer, name, key } = queue()
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'odd' })
    await redis.raw.hset(key('evt-odd'), 'data', data)
    await worker(name, sink.url)

    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(1)
    const [letter] = await producer.deadLetters()
    expect(letter?.eventId).toBe('odd')
    expect(letter?.unreadable).toBeTypeOf('string')
    expect(letter?.reason.length).toBeLessThan(1_000)
    expect(sink.requests).toHaveLength(0)
    await expect(producer.redrive('odd')).rejects.toBeInstanceOf(ValidationError)
  })

  it('lists a dead letter whose data was garbled after it failed, beside readable ones', async () => {
    const { producer, name, key } = queue()
    const sink = await startSink(() => ({ status: 410 }))
    open.push(sink)
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'a' })
    await producer.enqueue({ type: 'identify', userId: 'u2', messageId: 'b' })
    await worker(name, sink.url)
    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(2)
    await redis.raw.hset(key('evt-a'), 'data', '\u001b]0;pwned\u0007not json')

    const letters = Object.fromEntries((await producer.deadLetters()).map((letter) => [letter.eventId, letter]))
    expect(letters['a']?.unreadable).toMatch(/not JSON/)
    expect(letters['a']?.urls).toEqual([])
    expect(letters['b']?.unreadable).toBeUndefined()
    expect(letters['b']?.urls[0]?.failure).toEqual({ code: 'ERR_HTTP_STATUS', status: 410 })
  })

  it('survives job hashes with fields missing or of the wrong kind', async () => {
    const sink = await receiver()
    const { producer, name, key } = queue()
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'bare' })
    await redis.raw.hdel(key('evt-bare'), 'data', 'name', 'timestamp')
    await worker(name, sink.url)
    await expect.poll(async () => (await producer.counts()).failed, { timeout: 10_000 }).toBe(1)
    const [letter] = await producer.deadLetters()
    expect(letter).toMatchObject({ eventId: 'bare', urls: [] })
    expect(letter?.unreadable).toMatch(/eventId/)
  })

  // BullMQ parses a job's options inside its own fetch, before any Job exists: eventwire cannot
  // fail such a job; it keeps coming back as stalled. What it can do: report it, and go on.
  it('reports job options that are not JSON as errors and delivers the other jobs', async () => {
    const sink = await receiver()
    const { producer, name, key } = queue()
    await producer.enqueue({ type: 'identify', userId: 'u1', messageId: 'opts' })
    await producer.enqueue({ type: 'identify', userId: 'u2', messageId: 'fine' })
    await redis.raw.hset(key('evt-opts'), 'opts', '{"attempts":')
    const { errors } = await worker(name, sink.url)
    await expect
      .poll(() => sink.requests.map((request) => request.headers['webhook-id']), { timeout: 10_000 })
      .toContain('fine')
    expect(await producer.deadLetters()).toEqual([])
    await expect.poll(() => errors.map((error) => error.name), { timeout: 10_000 }).toContain('SyntaxError')
  })
})
