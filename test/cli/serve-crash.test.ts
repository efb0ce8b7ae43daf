// Nothing `eventwire serve` acknowledged is lost: under a steady load of batches, an ingest
// process is killed with SIGKILL, then a worker process, then Redis itself (its append-only file
// synced on every write), and each comes back. A receiver records the messageId (the Webhook-Id)
// of every event it takes; every event of every call answered 200 must reach it. Duplicates are allowed (delivery
// is at-least-once) and counted.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { plainEnv, startCli, type CliProcess } from '../helpers/cli.js'
import { freePort } from '../helpers/ports.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Sink } from '../helpers/sink.js'

const redis = redisForFile({ persistent: true, appendfsync: 'always' })
const running: CliProcess[] = []
let receiver: Sink | undefined
afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => (cli.child.exitCode === null ? cli.stop('SIGKILL') : undefined)))
  await receiver?.close()
})

const WRITE_KEY = 'wk_crash_51f0c3'
const BATCH = 10
const WRITERS = 4

/**
 * Writers that send batches of new messageIds, each batch again until it is answered 200 (as a
 * client retries), and remember every id of every batch answered 200.
 */
class Load {
  readonly acknowledged = new Set<string>()
  readonly refusals = new Map<string, number>()
  #next = 0
  #stopped = false
  #writers: Promise<void>[] = []

  constructor(readonly url: string) {}

  start(): void {
    for (let writer = 0; writer < WRITERS; writer++) this.#writers.push(this.#write())
  }

  async stop(): Promise<void> {
    this.#stopped = true
    await Promise.all(this.#writers)
  }

  async #write(): Promise<void> {
    while (!this.#stopped) {
      const ids = Array.from({ length: BATCH }, () => `m${this.#next++}`)
      const body = JSON.stringify({
        batch: ids.map((messageId) => ({ type: 'track', userId: 'u1', event: 'Crash', messageId })),
      })
      // The same batch (the same messageIds) until it is taken, or the load stops.
      while (!this.#stopped) {
        const answer = await this.#send(body)
        if (answer === '200') {
          for (const id of ids) this.acknowledged.add(id)
          break
        }
        this.refusals.set(answer, (this.refusals.get(answer) ?? 0) + 1)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
  }

  async #send(body: string): Promise<string> {
    try {
      const response = await fetch(`${this.url}/v1/batch`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
        },
        body,
        signal: AbortSignal.timeout(20_000),
      })
      await response.arrayBuffer()
      return String(response.status)
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause
      return cause?.code ?? (error as Error).name
    }
  }
}

describe.runIf(redis.available)('eventwire serve under crashes', () => {
  it('loses no event it answered 200 when ingest and worker processes are killed and Redis is killed and restarted', {
    timeout: 240_000,
  }, async () => {
    // The file's own client of Redis sees the restart too; it is not what is tested.
    redis.raw.on('error', () => undefined)
    const delivered = new Map<string, number>()
    receiver = await startSink((request) => {
      // Webhook-Id is the call's messageId.
      const id = String(request.headers['webhook-id'])
      delivered.set(id, (delivered.get(id) ?? 0) + 1)
      return { status: 200 }
    })
    const config = join(mkdtempSync(join(tmpdir(), 'eventwire-serve-crash-')), 'platform.json')
    writeFileSync(
      config,
      JSON.stringify({
        sources: [{ id: 'crash', writeKey: WRITE_KEY, destinations: ['receiver'] }],
        destinations: [{ id: 'receiver', webhooks: [{ url: receiver.url }], sharedSecret: 'crash-s3cret' }],
      }),
    )
    const port = await freePort()
    const env = plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}`, EVENTWIRE_CONFIG: config })
    const start = async (...args: string[]) => {
      const cli = await startCli(['serve', '--name', 'crash', ...args], env)
      running.push(cli)
      await cli.waitForRecord((record) => record['event'] === 'listening' || record['event'] === 'working', 30_000)
      return cli
    }
    const ingest = () => start('--role', 'ingest', '--port', String(port))
    // A dead worker's deliveries come back to the queue within two seconds or so.
    const worker = () => start('--role', 'worker', '--lock-duration', '1000')
    const until = async (condition: () => boolean, what: string) => {
      const deadline = Date.now() + 90_000
      while (!condition()) {
        if (Date.now() > deadline)
          throw new Error(
            `gave up waiting for ${what}: ${load.acknowledged.size} acknowledged, ${delivered.size} delivered, ` +
              `refusals ${JSON.stringify(Object.fromEntries(load.refusals))}\n` +
              running.map((cli) => `${cli.lines.slice(-5).join('\n')}\n${cli.stderr()}`).join('\n---\n'),
          )
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    const kill = async (cli: CliProcess) => {
      cli.child.kill('SIGKILL')
      await cli.exited
    }

    const load = new Load(`http://127.0.0.1:${port}`)
    let taking = await ingest()
    let working = await worker()
    load.start()

    await until(() => load.acknowledged.size >= 400 && delivered.size >= 200, 'the first events')
    await kill(taking)
    const ingestKilledAt = load.acknowledged.size
    taking = await ingest()

    await until(() => load.acknowledged.size >= ingestKilledAt + 400, 'events after the ingest restart')
    await kill(working)
    const workerKilledAt = delivered.size
    working = await worker()

    await until(() => delivered.size >= workerKilledAt + 200, 'deliveries after the worker restart')
    await redis.server.stop('SIGKILL')
    const redisKilledAt = load.acknowledged.size
    // Down until the ingest has told a client so: a call refused while Redis was gone. Its
    // readiness says so too, for a load balancer to take it out.
    await until(() => (load.refusals.get('503') ?? 0) > 0, 'a 503 while Redis is down')
    const readyWhileDown = (await fetch(`http://127.0.0.1:${port}/readyz`)).status
    await redis.server.restart()

    await until(() => load.acknowledged.size >= redisKilledAt + 400, 'events after the Redis restart')
    await load.stop()
    const acknowledged = [...load.acknowledged]
    await until(() => acknowledged.every((id) => delivered.has(id)), 'every acknowledged event at the receiver')

    const missing = acknowledged.filter((id) => !delivered.has(id))
    const deliveries = [...delivered.values()].reduce((sum, count) => sum + count, 0)
    console.log(
      `serve crashes: ${acknowledged.length} events answered 200 (ingest killed at ${ingestKilledAt}, ` +
        `worker killed at ${workerKilledAt} delivered, Redis killed at ${redisKilledAt}); ` +
        `${missing.length} missing, ${deliveries - delivered.size} duplicate deliveries, ` +
        `refusals ${JSON.stringify(Object.fromEntries(load.refusals))}`,
    )
    expect(missing).toEqual([])
    expect(readyWhileDown).toBe(503)
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200)
    // Both restarted processes kept running through the Redis restart.
    expect(taking.child.exitCode).toBeNull()
    expect(working.child.exitCode).toBeNull()
  })
})
