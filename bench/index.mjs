// eventwire's benchmarks, side by side with the peers, against a sink and a receiver that run in
// processes of their own. Each library and scenario runs in a fresh process, `--runs` times
// (default 3); the median (by wall time) is reported, as a table and as JSON in bench/results/.
//
//   npm run bench                 # everything (about fifteen minutes)
//   npm run bench -- --runs 1     # quicker
//   node bench/index.mjs --smoke  # tiny sizes, eventwire and the floor only (run by npm test)
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { installPinned } from '../scripts/install-pinned.mjs'

const { values: flags } = parseArgs({
  options: { smoke: { type: 'boolean' }, runs: { type: 'string' }, out: { type: 'string' } },
})
const smoke = flags.smoke ?? false
const runs = Number(flags.runs ?? (smoke ? 1 : 3))
const here = import.meta.dirname
const PEERS = ['@segment/analytics-node@3.1.0', 'posthog-node@5.70.0', '@rudderstack/rudder-sdk-node@3.0.13']
/** Extra node flags for the runs (the smoke test runs the sources through tsx). */
const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []

// The HTTPS receiver's test certificate, trusted by every run this bench starts (eventwire and the
// floor alike). Set over any the shell has: Node reads one such file, and the bench sends only to loopback.
process.env.NODE_EXTRA_CA_CERTS = join(here, '../test/fixtures/tls/self-signed.pem')

/** Starts a helper process that prints its port; `receiver.mjs` with `tls` as its third argument speaks HTTPS. */
async function startHelper(script, args = []) {
  const child = spawn(process.execPath, [join(here, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise((resolve) =>
    child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))),
  )
  return { child, url: `${args[2] === 'tls' ? 'https' : 'http'}://127.0.0.1:${port}` }
}

function runChild(script, config, extraArgs = []) {
  const output = execFileSync(
    process.execPath,
    [...nodeArgs, ...extraArgs, join(here, script), JSON.stringify(config)],
    {
      encoding: 'utf8',
      maxBuffer: 64 * 2 ** 20,
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 900_000,
    },
  )
  return JSON.parse(output.trim().split('\n').pop())
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const round = (value, digits = 0) => Number(value.toFixed(digits))

/**
 * A request to the sink's control API. The connection it reuses sat idle while a child ran (the
 * parent waits synchronously) and the server may have closed it in the meantime: one more try.
 */
async function control(sink, path, init) {
  try {
    return await (await fetch(`${sink.url}${path}`, init)).json()
  } catch {
    return (await fetch(`${sink.url}${path}`, init)).json()
  }
}

const stats = (sink) => control(sink, '/stats')

/** Runs one library through one scenario `runs` times; the median by wall time, with what the sink saw. */
async function measure(sink, { library, events, mode, rate, pad }) {
  const samples = []
  for (let attempt = 0; attempt < runs; attempt++) {
    await control(sink, '/reset', { method: 'POST' })
    const metrics = runChild('client-run.mjs', { library, events, sink: sink.url, mode, rate, pad })
    const seen = await stats(sink)
    samples.push({
      ...metrics,
      delivered: seen.events,
      unique: seen.unique,
      requests: seen.requests,
      wireBytes: seen.wireBytes,
      jsonBytes: seen.jsonBytes,
    })
    console.log(
      `${library}: ${round(metrics.wallMs)} ms, ${round(metrics.cpuMs)} ms CPU, ${round(metrics.peakRssMb)} MB peak RSS, ${seen.events}/${events} events (${seen.unique} unique) in ${seen.requests} requests, ${seen.wireBytes} bytes on the wire`,
    )
  }
  const chosen = samples.find((sample) => sample.wallMs === median(samples.map((s) => s.wallMs)))
  return {
    library,
    events,
    wallMs: round(chosen.wallMs),
    eventsPerSecond: round(events / (chosen.wallMs / 1000)),
    cpuMsPer1000: round((chosen.cpuMs / events) * 1000, 2),
    peakRssMb: round(chosen.peakRssMb),
    requests: chosen.requests,
    wireBytes: chosen.wireBytes,
    jsonBytes: chosen.jsonBytes,
    lost: events - chosen.unique,
    // Deliveries beyond the first of a message: retries after a timeout, for instance.
    duplicates: chosen.delivered - chosen.unique,
    samples: samples.map((sample) => round(sample.wallMs)),
  }
}

/** Runs one client scenario for each library; checks the sink got every event exactly once. */
async function clientScenario(sink, scenario) {
  console.log(`\n== ${scenario.name}`)
  const rows = []
  for (const { library, events } of scenario.libraries) {
    rows.push(await measure(sink, { library, events, mode: scenario.mode, rate: scenario.rate, pad: scenario.pad }))
  }
  const ours = rows.find((row) => row.library === 'eventwire')
  for (const row of rows) {
    // How many times faster eventwire is (events/s against events/s: libraries may run different sizes).
    row.eventwireSpeedup = round(ours.eventsPerSecond / row.eventsPerSecond, 2)
  }
  return { name: scenario.name, mode: scenario.mode, rows }
}

/**
 * How the client's cost grows with the number and size of events: the producer honours
 * backpressure (as any producer of a million events must), so what should stay flat is the CPU
 * per event, and the peak RSS should stop growing once the queue's bounds are reached.
 */
async function growthScenario(sink) {
  console.log('\n== cost growth (eventwire, producer honouring backpressure)')
  const sizes = smoke
    ? [
        { events: 1_000, pad: 0 },
        { events: 100, pad: 20_000 },
      ]
    : [
        { events: 10_000, pad: 0 },
        { events: 100_000, pad: 0 },
        { events: 1_000_000, pad: 0 },
        { events: 1_000, pad: 20_000 },
        { events: 10_000, pad: 20_000 },
        { events: 50_000, pad: 20_000 },
      ]
  const rows = []
  for (const { events, pad } of sizes) {
    const row = await measure(sink, { library: 'eventwire', events, mode: 'backpressure', pad: pad || undefined })
    rows.push({ ...row, eventBytes: pad ? '~20 KB' : '~150 B' })
  }
  return rows
}

function webhookScenario(receiver, failing, secure) {
  console.log('\n== webhooks')
  const deliveries = smoke ? 500 : 20_000
  const url = `${receiver.url}/in`
  const secureUrl = `${secure.url}/in`
  const cases = [
    { name: 'eventwire, 1 URL, signed', config: { mode: 'eventwire', urls: [url], secret: 's3cret', deliveries } },
    { name: 'eventwire, 1 URL, unsigned', config: { mode: 'eventwire', urls: [url], deliveries } },
    {
      name: 'eventwire, 5 URLs, signed',
      config: {
        mode: 'eventwire',
        urls: [1, 2, 3, 4, 5].map((n) => `${url}/${n}`),
        secret: 's3cret',
        deliveries: deliveries / 5,
      },
    },
    {
      name: 'floor: undici Pool.request, signed',
      config: { mode: 'undici', urls: [url], secret: 's3cret', deliveries },
    },
    { name: 'raw fetch, signed', config: { mode: 'fetch', urls: [url], secret: 's3cret', deliveries } },
    // The same over TLS (the test certificate, TLS 1.3 on loopback): the handshakes and the record layer.
    {
      name: 'eventwire, 1 URL, signed, HTTPS',
      config: { mode: 'eventwire', urls: [secureUrl], secret: 's3cret', deliveries },
    },
    {
      name: 'floor: undici Pool.request, signed, HTTPS',
      config: { mode: 'undici', urls: [secureUrl], secret: 's3cret', deliveries },
    },
  ]
  const rows = cases.map(({ name, config }) => {
    const samples = Array.from({ length: runs }, () => runChild('webhook-run.mjs', config))
    const chosen = samples.find((sample) => sample.wallMs === median(samples.map((s) => s.wallMs)))
    console.log(`${name}: ${round(chosen.perSecond)} requests/s (${samples.map((s) => round(s.perSecond)).join(', ')})`)
    return {
      name,
      requestsPerSecond: round(chosen.perSecond),
      cpuMs: round(chosen.cpuMs),
      samples: samples.map((s) => round(s.perSecond)),
    }
  })
  const pendingCount = smoke ? 1_000 : 100_000
  /** Runs one way of holding `pendingCount` waiting deliveries and prints what it held. */
  const held = (label, config) => {
    const run = runChild(
      'webhook-run.mjs',
      {
        urls: [`${failing.url}/in`],
        secret: 's3cret',
        deliveries: pendingCount,
        settleMs: smoke ? 0 : 120_000,
        ...config,
      },
      ['--expose-gc'],
    )
    console.log(
      `${pendingCount} deliveries ${label}: ${round(run.heapMb)} MB heap, ${round(run.rssMb)} MB RSS (peak ${round(run.peakRssMb)}); settled ${run.settledAfterMs === null ? '(V8 kept its young generation through the wait; after one collection)' : `after ${round(run.settledAfterMs / 1000)} s`}: ${round(run.settledRssMb)} MB RSS`,
    )
    return { deliveries: pendingCount, ...run }
  }
  // Two ways to wait: behind the failing URL's open breaker (the defaults), and each delivery
  // attempted once and waiting for its retry (breaker off). Each is measured right after the
  // burst and again once V8 has given back the young generation the burst grew.
  const pending = held('waiting behind an open breaker', { mode: 'pending', attempted: false })
  const attempted = held('waiting for a retry, each attempted once', { mode: 'pending', attempted: true })
  // The undici floor holding what any engine must for the same deliveries (id, body, the awaited
  // promise and its resolver, a record of as many fields), each sent once: what the runtime and
  // undici alone make of the attempted way.
  const floorHolding = held('held by the undici floor, each sent once', { mode: 'pending-floor' })
  const signing = runChild('webhook-run.mjs', { mode: 'sign', ops: smoke ? 1_000 : 100_000 })
  console.log(
    `per operation: createHmac ${round(signing.createHmacUs, 2)} µs, signPayload ${round(signing.signPayloadUs, 2)} µs, verifySignature ${round(signing.verifySignatureUs, 2)} µs`,
  )
  return { rows, pending, attempted, floorHolding, signing }
}

/**
 * Bad neighbours: one destination, five URLs in mode 'each', the first black-holed and the second
 * answering at 4.9 s, against the same run with both healthy; alternated, medians of `runs` pairs.
 */
function neighboursScenario(receiver) {
  console.log('\n== webhooks: bad neighbours (healthy URLs beside a black-holed one and one answering at 4.9 s)')
  const memory = neighboursPairs(receiver, 'memory', {
    events: smoke ? 1_000 : 20_000,
    rate: smoke ? 1_000 : 2_000,
  })
  // A worker and a producer in one process, on a Redis the run starts: a lower offered rate.
  const bullmq = hasRedis()
    ? neighboursPairs(receiver, 'bullmq', { events: smoke ? 200 : 8_000, rate: smoke ? 200 : 400 })
    : undefined
  if (bullmq === undefined) console.log('bullmq: skipped (no redis-server on PATH)')
  return { ...memory, bullmq }
}

/** Whether a redis-server can be started here. */
function hasRedis() {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Alternated clean and bad runs of one engine; medians of `runs` pairs. */
function neighboursPairs(receiver, engine, sizes) {
  const config = { engine, healthy: `${receiver.url}/in`, ...sizes }
  const pairs = Array.from({ length: runs }, () => ({
    clean: runChild('neighbours-run.mjs', { ...config, bad: false }),
    bad: runChild('neighbours-run.mjs', { ...config, bad: true }),
  }))
  const summary = (side) => ({
    p50Ms: round(median(pairs.map((pair) => pair[side].p50Ms)), 1),
    p99Ms: round(median(pairs.map((pair) => pair[side].p99Ms)), 1),
    perSecond: round(median(pairs.map((pair) => pair[side].perSecond))),
  })
  const result = {
    engine,
    events: config.events,
    rate: config.rate,
    clean: summary('clean'),
    bad: summary('bad'),
    pairs,
  }
  for (const side of ['clean', 'bad'])
    console.log(
      `${engine}, ${side}: healthy URLs p50 ${result[side].p50Ms} ms, p99 ${result[side].p99Ms} ms, ${result[side].perSecond} deliveries/s`,
    )
  return result
}

/**
 * The durable engine (WebhookQueue, WebhookWorker) against a bare BullMQ + undici floor, on a
 * redis-server that durable-run.mjs starts itself (port BENCH_REDIS_PORT, else a free one).
 * Skipped, with a line saying so, where redis-server is not installed.
 */
function durableScenario() {
  console.log('\n== durable delivery (BullMQ): deliveries with 1, 2 and 4 worker processes, enqueue, Redis bytes')
  if (!hasRedis()) {
    console.log('skipped: redis-server is not installed')
    return undefined
  }
  const redisPort = process.env.BENCH_REDIS_PORT ? Number(process.env.BENCH_REDIS_PORT) : undefined
  const durable = runChild('durable-run.mjs', { smoke, pairs: runs, redisPort })
  for (const row of durable.summary.deliveries)
    for (const kind of ['eventwire', 'floor'])
      console.log(
        `${kind}, ${row.workers} worker(s): ${row[kind].perSecond} deliveries/s (${row[kind].perSecondSpread.join('-')}), ${row[kind].cpuMicrosPerDelivery} µs worker CPU per delivery (${row[kind].cpuSpread.join('-')}), ${row[kind].commandsPerDelivery} Redis commands per delivery`,
      )
  return durable
}

/**
 * Fairness between destinations on the durable engine: a quiet destination's latency with another
 * one's backlog waiting, against the same with that one as busy but nothing piled up.
 */
function fairnessScenario() {
  console.log("\n== fairness (BullMQ): a quiet destination's latency beside another's backlog")
  if (!hasRedis()) {
    console.log('skipped: redis-server is not installed')
    return undefined
  }
  const fairness = runChild(
    'fairness-run.mjs',
    smoke ? { backlog: 2_000, seconds: 2, workers: 2 } : { backlog: 1_000_000, seconds: 20, workers: 4 },
  )
  for (const phase of ['alone', 'busy', 'backlog'])
    console.log(
      `${phase}: p50 ${fairness[phase].p50} ms, p99 ${fairness[phase].p99} ms, the other destination ${fairness[phase].bigPerSecond}/s`,
    )
  return fairness
}

/**
 * `eventwire serve`: ingest against a bare BullMQ server, and ingest-to-webhook latency with one
 * ingest and two worker processes. Needs the CLI build (dist/cli.js).
 */
function serveScenario() {
  console.log('\n== eventwire serve: ingest against a bare node:http + Queue.addBulk server; ingest-to-webhook latency')
  if (!hasRedis()) {
    console.log('skipped: redis-server is not installed')
    return undefined
  }
  const serve = runChild(
    'serve-run.mjs',
    smoke
      ? { events: 2_000, pairs: 1, rates: [200], seconds: 2 }
      : { events: 100_000, pairs: runs, rates: [200, 2_000], seconds: 20 },
  )
  console.log(`ingest: ${serve.ingestRatio}x the floor's events/s (median of each)`)
  for (const row of serve.latency)
    console.log(`${row.rate} events/s: p50 ${row.p50} ms, p95 ${row.p95} ms, p99 ${row.p99} ms`)
  return serve
}

/** The same in memory: one WebhookDestination serving both destinations, a backlog of 100,000 at a receiver that answers it in 20 ms. */
function memoryFairnessScenario() {
  console.log("\n== fairness (in memory): a quiet destination's latency beside another's backlog")
  const fairness = runChild(
    'fairness-memory-run.mjs',
    smoke ? { backlog: 2_000, seconds: 2 } : { backlog: 100_000, seconds: 10 },
  )
  for (const phase of ['alone', 'busy', 'backlog'])
    console.log(
      `${phase}: p50 ${fairness[phase].p50} ms, p99 ${fairness[phase].p99} ms, the other destination ${fairness[phase].bigPerSecond}/s`,
    )
  return fairness
}

function targets(client, webhooks, neighbours, durable, fairness, memoryFairness, serve) {
  const row = (scenario, library) => client.find((s) => s.name === scenario)?.rows.find((r) => r.library === library)
  const burst = (library) => row('100,000 small events, as fast as they can be enqueued', library)
  const ours = burst('eventwire')
  const million = row('1,000,000 small events, producer honouring backpressure', 'eventwire')
  const steady = (library) => row('steady 20,000 events/s for 10 s', library)
  const rate = (name) => webhooks.rows.find((r) => r.name === name)?.requestsPerSecond
  const list = [
    [
      '100k: at least 10x faster than @segment/analytics-node',
      burst('segment') && ours.eventsPerSecond / burst('segment').eventsPerSecond,
      10,
      '>=',
    ],
    [
      '100k: at least 4x faster than posthog-node',
      burst('posthog') && ours.eventsPerSecond / burst('posthog').eventsPerSecond,
      4,
      '>=',
    ],
    [
      '100k: within 1.5x of the floor (wall time ratio)',
      burst('floor') && ours.wallMs / burst('floor').wallMs,
      1.5,
      '<=',
    ],
    ['100k: peak RSS under 120 MB', ours?.peakRssMb, 120, '<'],
    [
      'steady 20,000/s: CPU per event within 1.5x of the floor with the same flush policy',
      steady('floorSamePolicy') && steady('eventwire').cpuMsPer1000 / steady('floorSamePolicy').cpuMsPer1000,
      1.5,
      '<=',
    ],
    ['1M with backpressure: peak RSS under 300 MB', million?.peakRssMb, 300, '<'],
    ['1M with backpressure: zero lost', million?.lost, 0, '=='],
    [
      'webhooks: at least 85% of the undici floor, signed',
      rate('eventwire, 1 URL, signed') / rate('floor: undici Pool.request, signed'),
      0.85,
      '>=',
    ],
    [
      'bad neighbours: healthy URLs keep at least 90% of their throughput',
      neighbours.bad.perSecond / neighbours.clean.perSecond,
      0.9,
      '>=',
    ],
    ['bad neighbours: healthy URLs keep their p99 within 2x', neighbours.bad.p99Ms / neighbours.clean.p99Ms, 2, '<='],
    [
      'bad neighbours on BullMQ: healthy URLs keep at least 90% of their throughput',
      neighbours.bullmq && neighbours.bullmq.bad.perSecond / neighbours.bullmq.clean.perSecond,
      0.9,
      '>=',
    ],
    [
      'bad neighbours on BullMQ: healthy URLs keep their p99 within 2x',
      neighbours.bullmq && neighbours.bullmq.bad.p99Ms / neighbours.bullmq.clean.p99Ms,
      2,
      '<=',
    ],
    [
      'webhooks: 100,000 waiting deliveries under 150 MB (RSS, settled; the larger of the two ways)',
      webhooks.pending.deliveries === 100_000
        ? Math.max(webhooks.pending.settledRssMb, webhooks.attempted.settledRssMb)
        : undefined,
      150,
      '<',
    ],
    [
      'webhooks: 100,000 deliveries each attempted once, settled RSS at most the undici floor holding the same',
      webhooks.pending.deliveries === 100_000
        ? webhooks.attempted.settledRssMb / webhooks.floorHolding.settledRssMb
        : undefined,
      1,
      '<=',
    ],
  ]
  const listed = list.map(([name, value, goal, op]) => {
    const holds =
      value === undefined
        ? undefined
        : op === '>='
          ? value >= goal
          : op === '<='
            ? value <= goal
            : op === '<'
              ? value < goal
              : value === goal
    return { name, value: value === undefined ? undefined : round(value, 2), goal, holds }
  })
  if (fairness)
    listed.push({
      name: "fairness: a quiet destination's p99 beside a 1,000,000 backlog within 2x of it beside the same load without one",
      value: fairness.backlogOverBusy,
      goal: 2,
      holds: fairness.backlogOverBusy <= 2,
    })
  listed.push({
    name: "fairness in memory: a quiet destination's p99 beside a 100,000 backlog within 2x of it alone",
    value: memoryFairness.backlogOverAlone,
    goal: 2,
    holds: memoryFairness.backlogOverAlone <= 2,
  })
  if (serve) {
    listed.push({
      name: 'serve: ingest at least 0.8x the events/s of a bare node:http server doing Queue.addBulk',
      value: serve.ingestRatio,
      goal: 0.8,
      holds: serve.ingestRatio >= 0.8,
    })
    const slow = serve.latency.find((row) => row.rate === 200)
    if (slow)
      listed.push({
        name: 'serve: ingest-to-webhook p95 under 100 ms at 200 events/s (one ingest, two workers)',
        value: slow.p95,
        goal: 100,
        holds: slow.p95 < 100 && slow.received === slow.events,
      })
  }
  // durable-run.mjs checks its own targets, each ratio taken within its pair.
  return [...listed, ...(durable?.targets ?? [])]
}

/** The durable tables: medians, the spread (min-max) of the runs, and eventwire's ratio to the floor within each pair. */
function printDurable(durable) {
  console.log(
    `\n| durable, ${durable.sizes.events} deliveries | workers | deliveries/s (spread) | worker CPU µs / delivery (spread) | Redis commands / delivery | vs floor: throughput, CPU |`,
  )
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const row of durable.summary.deliveries)
    for (const kind of ['eventwire', 'floor']) {
      const side = row[kind]
      const versus = kind === 'floor' ? '' : `${row.throughputRatio}x, ${row.cpuRatio}x`
      console.log(
        `| ${kind} | ${row.workers} | ${side.perSecond} (${side.perSecondSpread.join('-')}) | ${side.cpuMicrosPerDelivery} (${side.cpuSpread.join('-')}) | ${side.commandsPerDelivery} | ${versus} |`,
      )
    }
  console.log(
    `\n| enqueue, ${durable.sizes.enqueueEvents} events, ${durable.sizes.batch} at a time | events/s (spread) | producer CPU µs / event (spread) | Redis commands / event |`,
  )
  console.log('| --- | --- | --- | --- |')
  for (const [variant, row] of Object.entries(durable.summary.enqueue))
    console.log(
      `| ${variant} | ${row.perSecond} (${row.perSecondSpread.join('-')}) | ${row.cpuMicrosPerEvent} (${row.cpuSpread.join('-')}) | ${row.commandsPerEvent} |`,
    )
  if (durable.summary.memory) {
    console.log(
      `\n| ${durable.sizes.waitingEvents} waiting deliveries | Redis bytes / waiting delivery | job hash bytes |`,
    )
    console.log('| --- | --- | --- |')
    for (const [kind, row] of Object.entries(durable.summary.memory))
      console.log(`| ${kind} | ${row.bytesPerWaiting} | ${row.jobHashBytes} |`)
  }
}

if (!smoke) installPinned(join(here, '.deps'), PEERS)
if (!process.env.EVENTWIRE_ENTRY) execFileSync('npm', ['run', 'build'], { stdio: 'ignore' })
const sink = await startHelper('sink.mjs')
const receiver = await startHelper('receiver.mjs', ['200'])
const failing = await startHelper('receiver.mjs', ['500'])
const secure = await startHelper('receiver.mjs', ['200', '', 'tls'])
try {
  const small = smoke ? 2_000 : 100_000
  const peers = smoke
    ? []
    : [
        { library: 'segment', events: small },
        { library: 'posthog', events: small },
        { library: 'rudderstack', events: 2_000 },
      ]
  const scenarios = [
    {
      name: '100,000 small events, as fast as they can be enqueued',
      mode: 'burst',
      libraries: [
        { library: 'eventwire', events: small },
        { library: 'eventwire gzip', events: small },
        ...peers,
        { library: 'floor', events: small },
      ],
    },
    {
      name: '1,000,000 small events, producer honouring backpressure',
      mode: 'backpressure',
      libraries: [
        { library: 'eventwire', events: smoke ? 5_000 : 1_000_000 },
        { library: 'floor', events: smoke ? 5_000 : 1_000_000 },
      ],
    },
    {
      name: 'steady 20,000 events/s for 10 s',
      mode: 'steady',
      rate: smoke ? 2_000 : 20_000,
      libraries: [
        { library: 'eventwire', events: smoke ? 2_000 : 200_000 },
        { library: 'eventwire gzip', events: smoke ? 2_000 : 200_000 },
        ...(smoke
          ? []
          : [
              { library: 'segment', events: 200_000 },
              { library: 'posthog', events: 200_000 },
            ]),
        { library: 'floor', events: smoke ? 2_000 : 200_000 },
        { library: 'floorSamePolicy', events: smoke ? 2_000 : 200_000 },
      ],
    },
    {
      name: '5,000 large events (~20 KB each)',
      mode: 'burst',
      pad: 20_000,
      libraries: [
        { library: 'eventwire', events: smoke ? 100 : 5_000 },
        { library: 'eventwire gzip', events: smoke ? 100 : 5_000 },
        ...(smoke
          ? []
          : [
              { library: 'segment', events: 5_000 },
              { library: 'posthog', events: 5_000 },
            ]),
        { library: 'floor', events: smoke ? 100 : 5_000 },
      ],
    },
  ]
  const client = []
  for (const scenario of scenarios) client.push(await clientScenario(sink, scenario))
  const growth = await growthScenario(sink)
  const webhooks = webhookScenario(receiver, failing, secure)
  const neighbours = neighboursScenario(receiver)
  const durable = durableScenario()
  const fairness = fairnessScenario()
  const memoryFairness = memoryFairnessScenario()
  const serve = serveScenario()
  console.log('\n== tracking plans and middleware: CPU per track call, no plan, each schema library, three middlewares')
  const plans = runChild('plan-run.mjs', smoke ? { calls: 1_000, rounds: 1 } : { calls: 10_000, rounds: 40 })
  console.log('\n== signature schemes: CPU per delivery to sign (a WebhookDestination) and to verify (verifyWebhook)')
  const signing = runChild('signing-run.mjs', smoke ? { events: 500, rounds: 1 } : { events: 5_000, rounds: 15 })
  console.log('\n== gzip per batch body, by size: what compressionThreshold rests on')
  const gzip = runChild('gzip-run.mjs', { rounds: smoke ? 1 : 7 })
  const results = {
    date: new Date().toISOString(),
    smoke,
    runs,
    machine: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model },
    client,
    growth,
    webhooks,
    neighbours,
    durable,
    fairness,
    memoryFairness,
    serve,
    plans,
    signing,
    gzip,
    targets: smoke ? [] : targets(client, webhooks, neighbours, durable, fairness, memoryFairness, serve),
  }

  console.log(
    '\n| scenario | library | events | wall ms | events/s | CPU ms / 1k events | peak RSS MB | requests | lost | duplicates | eventwire is x faster |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const scenario of client) {
    for (const row of scenario.rows) {
      console.log(
        `| ${scenario.name} | ${row.library} | ${row.events} | ${row.wallMs} | ${row.eventsPerSecond} | ${row.cpuMsPer1000} | ${row.peakRssMb} | ${row.requests} | ${row.lost} | ${row.duplicates} | ${row.eventwireSpeedup} |`,
      )
    }
  }
  console.log(
    '\n| compression: same run | bytes on the wire | JSON bytes | CPU ms / 1k events | wall ms | gzip: wire bytes, CPU, wall |',
  )
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const scenario of client) {
    const plain = scenario.rows.find((row) => row.library === 'eventwire')
    const gzip = scenario.rows.find((row) => row.library === 'eventwire gzip')
    if (plain === undefined || gzip === undefined) continue
    for (const row of [plain, gzip]) {
      const versus =
        row === plain
          ? ''
          : `${round(row.wireBytes / plain.wireBytes, 3)}x, ${round(row.cpuMsPer1000 / plain.cpuMsPer1000, 2)}x, ${round(row.wallMs / plain.wallMs, 2)}x`
      console.log(
        `| ${scenario.name}: ${row.library} | ${row.wireBytes} | ${row.jsonBytes} | ${row.cpuMsPer1000} | ${row.wallMs} | ${versus} |`,
      )
    }
  }
  console.log('\n| track call, typical event (order, two items) | CPU µs / call | the plan or chain alone, µs |')
  console.log('| --- | --- | --- |')
  for (const [name, micros] of Object.entries(plans.cpuMicrosPerCall)) {
    const alone = round(micros - plans.cpuMicrosPerCall['no plan'], 2)
    console.log(`| ${name} | ${round(micros, 2)} | ${name === 'no plan' ? '' : alone} |`)
  }
  console.log('\n| signature scheme | CPU µs / delivery, sending | the signing alone, µs |')
  console.log('| --- | --- | --- |')
  for (const [name, micros] of Object.entries(signing.sendCpuMicrosPerEvent)) {
    const alone = round(micros - signing.sendCpuMicrosPerEvent.unsigned, 1)
    console.log(`| ${name} | ${round(micros, 1)} | ${name === 'unsigned' ? '' : alone} |`)
  }
  console.log('\n| verifying | CPU µs / delivery |\n| --- | --- |')
  for (const [name, micros] of Object.entries(signing.verifyCpuMicrosPerDelivery))
    console.log(`| ${name} | ${round(micros, 1)} |`)
  console.log('\n| gzip of a batch body | events | JSON bytes | gzip bytes | CPU µs / body |')
  console.log('| --- | --- | --- | --- | --- |')
  for (const row of gzip.rows) {
    console.log(`| ${row.compressor} | ${row.events} | ${row.jsonBytes} | ${row.gzipBytes} | ${round(row.cpuMicros)} |`)
  }
  console.log('\n| events | event size | CPU µs / event | wall µs / event | peak RSS MB | requests |')
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const row of growth) {
    console.log(
      `| ${row.events} | ${row.eventBytes} | ${round(row.cpuMsPer1000, 1)} | ${round((row.wallMs / row.events) * 1000, 1)} | ${row.peakRssMb} | ${row.requests} |`,
    )
  }
  console.log('\n| webhook scenario | requests/s |\n| --- | --- |')
  for (const row of webhooks.rows) console.log(`| ${row.name} | ${row.requestsPerSecond} |`)
  if (durable) printDurable(durable)
  for (const target of results.targets)
    console.log(
      `${target.holds === undefined ? 'n/a ' : target.holds ? 'HOLDS' : 'MISSED'}  ${target.name}: ${target.value} (goal ${target.goal})`,
    )

  const out = flags.out ?? join(here, 'results')
  mkdirSync(out, { recursive: true })
  writeFileSync(join(out, smoke ? 'smoke.json' : 'latest.json'), `${JSON.stringify(results, null, 2)}\n`)
  const lost = [...client.flatMap((scenario) => scenario.rows), ...growth].filter((row) => row.lost !== 0)
  if (lost.length > 0) {
    console.error(`lost events: ${lost.map((row) => `${row.library} ${row.lost}`).join(', ')}`)
    process.exitCode = 1
  }
} finally {
  for (const helper of [sink, receiver, failing, secure]) helper.child.kill()
}
