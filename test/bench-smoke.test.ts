import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { isInstalled, REDIS } from './helpers/services.js'

/** One engine's alternated runs of the bad-neighbours scenario. */
interface NeighbourPairs {
  events: number
  pairs: Array<Record<'clean' | 'bad', { healthyDeliveries: number }>>
}

const root = fileURLToPath(new URL('..', import.meta.url))

interface DeliveriesRun {
  readonly events: number
  readonly delivered: number
  readonly failed: number
  readonly duplicates: number
  readonly cpuMicrosPerDelivery: number
  readonly commandsPerDelivery: number
}

interface DurableResults {
  readonly deliveries: Array<{ workers: number; eventwire: DeliveriesRun; floor: DeliveriesRun }>
  readonly enqueue: Array<Record<string, { perSecond: number; commandsPerEvent: number }>>
  readonly memory: Array<Record<'eventwire' | 'floor', { waiting: number; bytesPerWaiting: number }>>
  readonly scale: Array<
    Record<
      'one' | 'many' | 'quiet',
      DeliveriesRun & { destinations: number; busy: number; urlsPerDestination: number; workerHeapMb: number[] }
    > & { quietHeapOverOne: number }
  >
}

/** The durable part: each worker count ran both sides, every event was delivered once, each store variant stored. */
function checkDurable(durable: DurableResults | undefined): void {
  expect(durable?.deliveries.map((pair) => pair.workers)).toEqual([1, 2])
  for (const run of durable?.deliveries.flatMap((pair) => [pair.eventwire, pair.floor]) ?? []) {
    expect(run).toMatchObject({ delivered: run.events, failed: 0, duplicates: 0 })
    expect(run.cpuMicrosPerDelivery).toBeGreaterThan(0)
    expect(run.commandsPerDelivery).toBeGreaterThan(0)
  }
  const [variants] = durable?.enqueue ?? []
  expect(Object.keys(variants ?? {})).toEqual(expect.arrayContaining(['enqueue', 'add', 'addBulk']))
  for (const variant of Object.values(variants ?? {})) expect(variant.commandsPerEvent).toBeGreaterThan(0)
  const [memory] = durable?.memory ?? []
  expect(memory?.eventwire.waiting).toBe(memory?.floor.waiting)
  expect(memory?.eventwire.bytesPerWaiting).toBeGreaterThan(0)
  // The registry at scale: one destination, then many, then the registry with one busy, each
  // event delivered at each of its URLs; each worker's heap is reported.
  const [scale] = durable?.scale ?? []
  expect(scale?.one.destinations).toBe(1)
  expect(scale?.many.destinations).toBeGreaterThan(1)
  expect(scale?.quiet).toMatchObject({ destinations: scale?.many.destinations, busy: 1 })
  for (const run of [scale?.one, scale?.many, scale?.quiet]) {
    expect(run).toMatchObject({ delivered: run?.events, failed: 0 })
    expect(run?.duplicates).toBe((run?.events ?? 0) * ((run?.urlsPerDestination ?? 0) - 1))
    for (const heap of run?.workerHeapMb ?? []) expect(heap).toBeGreaterThan(0)
  }
  expect(scale?.quietHeapOverOne).toBeGreaterThan(0)
}

// The durable part starts redis-server and a dozen worker and producer processes through tsx: on a
// busy 2-core machine the whole smoke run took 85 s.
it('keeps the benchmark runnable: a smoke run (tiny sizes, eventwire and the floor) delivers everything', {
  timeout: 300_000,
}, () => {
  const out = mkdtempSync(join(tmpdir(), 'eventwire-bench-'))
  try {
    execFileSync(process.execPath, [join(root, 'bench/index.mjs'), '--smoke', '--out', out], {
      cwd: root,
      stdio: 'ignore',
      env: {
        ...process.env,
        // The sources, not a build: npm test does not build.
        BENCH_NODE_ARGS: '--import tsx',
        EVENTWIRE_ENTRY: join(root, 'src/index.ts'),
        EVENTWIRE_WEBHOOK_ENTRY: join(root, 'src/webhook/index.ts'),
        EVENTWIRE_BULLMQ_ENTRY: join(root, 'src/webhook/bullmq/index.ts'),
      },
    })
    const results = JSON.parse(readFileSync(join(out, 'smoke.json'), 'utf8')) as {
      client: Array<{
        rows: Array<{ library: string; lost: number; requests: number; wireBytes: number; jsonBytes: number }>
      }>
      webhooks: {
        rows: Array<{ requestsPerSecond: number }>
        pending: { pending: number }
        attempted: { pending: number }
        floorHolding: { pending: number }
      }
      plans: { cpuMicrosPerCall: Record<string, number> }
      signing: { sendCpuMicrosPerEvent: Record<string, number>; verifyCpuMicrosPerDelivery: Record<string, number> }
      gzip: { rows: Array<{ compressor: string; jsonBytes: number; gzipBytes: number; cpuMicros: number }> }
      neighbours: NeighbourPairs & { bullmq?: NeighbourPairs }
      durable?: DurableResults
      memoryFairness: Record<'alone' | 'busy' | 'backlog', { small: number; bigPerSecond: number }>
      serve?: {
        ingest: Array<{ kind: string; stored: number; refused: number; eventsPerSecond: number }>
        latency: Array<{ events: number; received: number }>
      }
    }
    const rows = results.client.flatMap((scenario) => scenario.rows)
    // eventwire, eventwire with gzip and the floor(s) of each scenario.
    expect(rows.length).toBe(12)
    expect(rows.every((row) => row.lost === 0 && row.requests > 0)).toBe(true)
    // Compressed, the same JSON travels in fewer bytes; uncompressed, the wire carries the JSON.
    for (const row of rows.filter((row) => row.library === 'eventwire gzip')) {
      expect(row.wireBytes).toBeLessThan(row.jsonBytes / 2)
    }
    for (const row of rows.filter((row) => row.library === 'eventwire')) expect(row.wireBytes).toBe(row.jsonBytes)
    // Bad neighbours, in memory and (with a redis-server) on BullMQ: the healthy URLs get every event.
    for (const engine of [results.neighbours, results.neighbours.bullmq]) {
      if (engine === undefined) continue
      for (const pair of engine.pairs)
        for (const run of [pair.clean, pair.bad]) expect(run.healthyDeliveries).toBe(engine.events * 3)
    }
    // Fairness in memory: every event of the quiet destination arrives in each phase (2 s at 20 a second).
    for (const phase of ['alone', 'busy', 'backlog'] as const) expect(results.memoryFairness[phase].small).toBe(40)
    expect(results.memoryFairness.backlog.bigPerSecond).toBeGreaterThan(0)
    // serve (with a redis-server): every event the ingest took is in Redis, and every one reaches the receiver.
    if (results.serve !== undefined) {
      expect(results.serve.ingest.map((run) => run.kind).sort()).toEqual(['floor', 'serve'])
      for (const run of results.serve.ingest) expect([run.stored, run.refused]).toEqual([2_000, 0])
      for (const row of results.serve.latency) expect(row.received).toBe(row.events)
    }
    expect(results.webhooks.rows).toHaveLength(7)
    expect(results.webhooks.rows.every((row) => row.requestsPerSecond > 0)).toBe(true)
    expect(results.webhooks.pending.pending).toBe(1_000)
    expect(results.webhooks.attempted.pending).toBe(1_000)
    expect(results.webhooks.floorHolding.pending).toBe(1_000)
    expect(Object.keys(results.plans.cpuMicrosPerCall)).toEqual([
      'no plan',
      'Zod 4',
      'Valibot 1',
      'ArkType 2',
      'three middlewares',
    ])
    expect(Object.values(results.plans.cpuMicrosPerCall).every((micros) => micros > 0)).toBe(true)
    expect(Object.keys(results.signing.sendCpuMicrosPerEvent)).toEqual([
      'unsigned',
      'X-Signature',
      'Standard Webhooks',
      'both',
    ])
    expect(Object.keys(results.signing.verifyCpuMicrosPerDelivery)).toHaveLength(3)
    expect(results.gzip.rows).toHaveLength(14)
    expect(results.gzip.rows.every((row) => row.gzipBytes < row.jsonBytes && row.cpuMicros > 0)).toBe(true)
    // Without redis-server the bench says it skipped the durable part; with it, every event arrived once.
    if (isInstalled(REDIS.executable)) checkDurable(results.durable)
    else expect(results.durable).toBeUndefined()
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
})
