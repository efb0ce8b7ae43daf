import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import type { DeliveryError } from '../../src/index.js'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import { ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'

const { captured, respond } = useBatchEndpoint()

describe('close()', () => {
  it('drains everything queued before resolving', async () => {
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000 })
    for (let index = 0; index < 45; index++) client.track({ userId: 'u1', event: 'E', properties: { index } })
    await client.close()
    expect(captured.flatMap((request) => request.json.batch)).toHaveLength(45)
    expect(client.pending).toBe(0)
  })

  it('is idempotent: a second call returns the same promise and sends nothing more', async () => {
    const client = new Client('key', { endpoint: ENDPOINT })
    client.track({ userId: 'u1', event: 'E' })
    const first = client.close()
    const second = client.close()
    expect(second).toBe(first)
    await second
    await client.close()
    expect(captured).toHaveLength(1)
  })

  it('gives up after its timeout: aborts what is in flight and reports ERR_CLOSE_TIMEOUT for every message left', async () => {
    respond.current = () => new HttpResponse('{}', { status: 503 })
    const client = new Client('key', {
      endpoint: ENDPOINT,
      flushAt: 1,
      maxConcurrentRequests: 1,
      retry: { baseDelay: 50, maxDelay: 50 },
    })
    const errors: DeliveryError[] = []
    client.on('error', (error) => errors.push(error))
    for (let index = 0; index < 3; index++) client.track({ userId: 'u1', event: 'E', messageId: `m${index}` })
    const started = Date.now()
    await client.close({ timeout: 200 })
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(errors.every((error) => error.code === 'ERR_CLOSE_TIMEOUT')).toBe(true)
    expect(errors.flatMap((error) => error.messages.map((m) => m.messageId)).sort()).toEqual(['m0', 'm1', 'm2'])
    expect(client.pending).toBe(0)
  })

  it('lets flush() resolve after close', async () => {
    const client = new Client('key', { endpoint: ENDPOINT })
    await client.close()
    await expect(client.flush()).resolves.toBeUndefined()
  })
})

describe('process lifetime', () => {
  const entry = fileURLToPath(new URL('../../src/index.ts', import.meta.url))

  /** Runs `body` in a Node process with `Client` imported from the sources. */
  function runNode(body: string) {
    const script = `const { Client } = await import(${JSON.stringify(entry)})\n${body}`
    return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    })
  }

  it('does not keep a Node process alive with messages waiting for the flush timer, and says they are lost', () => {
    const started = Date.now()
    const child = runNode(`
      const client = new Client('key', { endpoint: 'http://127.0.0.1:9', flushAfter: 600000 })
      client.track({ userId: 'u1', event: 'E' })
      console.log('queued', client.pending)
    `)
    expect(child.stdout.trim()).toBe('queued 1')
    expect(child.stderr).toBe(
      '  analytics 1 message still queued or in flight at exit was lost: await client.close() before the process ends.\n',
    )
    expect(child.status).toBe(0)
    expect(Date.now() - started).toBeLessThan(15_000)
  })

  it("names each client's count through its own logger, at process.exit() too, and says nothing for a closed or empty client", () => {
    const child = runNode(`
      const logger = (name) => ({ log() {}, error: (line) => console.log(name + ': ' + line) })
      const options = { endpoint: 'http://127.0.0.1:9', flushAfter: 600000 }
      const a = new Client('key', { ...options, logger: logger('a') })
      const b = new Client('key', { ...options, logger: logger('b') })
      const empty = new Client('key', { ...options, logger: logger('empty') })
      const closed = new Client('key', { ...options, logger: logger('closed'), fetch: async () => new Response('{}') })
      for (let i = 0; i < 3; i++) a.track({ userId: 'u1', event: 'E' })
      b.identify({ userId: 'u1' })
      closed.track({ userId: 'u1', event: 'E' })
      await closed.close()
      process.exit(3)
    `)
    expect(child.stderr).toBe('')
    expect(child.status).toBe(3)
    expect(child.stdout.trim().split('\n')).toEqual([
      'a: 3 messages still queued or in flight at exit were lost: await client.close() before the process ends.',
      'b: 1 message still queued or in flight at exit was lost: await client.close() before the process ends.',
    ])
  })
})
