// One webhook scenario in a fresh process. Prints one JSON line.
//
//   node bench/webhook-run.mjs '{"mode":"eventwire","urls":["http://127.0.0.1:PORT/in"],"secret":"s","deliveries":20000}'
// modes: eventwire | undici (the floor: Pool.request) | fetch | pending (memory) | pending-floor (the
// same memory on the floor) | sign (per-op cost)
import { createHmac } from 'node:crypto'
import { getHeapSpaceStatistics } from 'node:v8'
import { smallOrderEvent } from './typical-event.mjs'

const config = JSON.parse(process.argv[2])
const webhookEntry = process.env.EVENTWIRE_WEBHOOK_ENTRY ?? 'eventwire/webhook'
const { WebhookDestination, signPayload, verifySignature, toWebhookPayload } = await import(webhookEntry)
const event = smallOrderEvent
const hmac = (body, secret) => createHmac('sha1', secret).update(body).digest('hex')
const youngMb = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size / 2 ** 20
/** The young generation's size before any scenario ran: what "settled" waits to see again. */
const youngAtStartMb = youngMb()

/** Runs `total` jobs with `inFlight` at a time. */
async function pool(total, inFlight, job) {
  let next = 0
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) await job(next++)
    }),
  )
}

async function throughput(run) {
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  await run()
  const wallMs = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  return {
    wallMs,
    perSecond: (config.deliveries * config.urls.length) / (wallMs / 1000),
    cpuMs: (cpu.user + cpu.system) / 1000,
  }
}

/**
 * The memory a process holds right after its deliveries were queued (after a GC), and again once
 * settled: the burst grows V8's young generation (to 32 MB), which V8 keeps until its memory
 * reducer runs, some seconds after allocation calms down, or at its next collection once it has.
 * A process holding these deliveries for an hour looks like the second. Waits for that, at most
 * `settleMs`, then collects (the next collection of a calm process) and reads RSS once it is steady.
 */
async function memoryHeld() {
  globalThis.gc?.()
  const memory = process.memoryUsage()
  const settleStarted = performance.now()
  while (youngMb() > youngAtStartMb && performance.now() - settleStarted < (config.settleMs ?? 0)) {
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  const settledAfterMs = youngMb() > youngAtStartMb ? null : Math.round(performance.now() - settleStarted)
  globalThis.gc?.()
  const settled = { ...process.memoryUsage(), rss: await rssOnceSteady() }
  return {
    heapMb: memory.heapUsed / 2 ** 20,
    rssMb: memory.rss / 2 ** 20,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    settledAfterMs,
    settledHeapMb: settled.heapUsed / 2 ** 20,
    settledRssMb: settled.rss / 2 ** 20,
  }
}

/**
 * RSS once it has stopped falling: a collection that shrinks the young generation gives its pages
 * back to the system a moment after it returns. Three readings 250 ms apart within half a MB, at most 5 s.
 */
async function rssOnceSteady() {
  let last = process.memoryUsage().rss
  let steady = 0
  for (let waited = 0; waited < 5_000 && steady < 2; waited += 250) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    const now = process.memoryUsage().rss
    steady = last - now < 2 ** 19 ? steady + 1 : 0
    last = now
  }
  return last
}

let result
if (config.mode === 'eventwire') {
  const destination = new WebhookDestination({
    webhooks: config.urls.map((url) => ({ url })),
    sharedSecret: config.secret,
  })
  result = await throughput(async () => {
    const results = await Promise.all(
      Array.from({ length: config.deliveries }, (_, index) => destination.deliver(event(index))),
    )
    const failed = results.filter((delivery) => delivery.status !== 'delivered').length
    if (failed > 0) throw new Error(`${failed} deliveries failed`)
  })
  await destination.close()
} else if (config.mode === 'undici') {
  const { Pool } = await import('undici')
  const target = new URL(config.urls[0])
  const connection = new Pool(target.origin, { connections: 50 })
  result = await throughput(() =>
    pool(config.deliveries, 50, async (index) => {
      const body = JSON.stringify(toWebhookPayload(event(index)))
      const headers = { 'content-type': 'application/json', 'user-agent': 'floor/1.0' }
      if (config.secret) headers['x-signature'] = hmac(body, config.secret)
      const response = await connection.request({ method: 'POST', path: target.pathname, headers, body })
      await response.body.dump()
      if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}`)
    }),
  )
  await connection.close()
} else if (config.mode === 'fetch') {
  result = await throughput(() =>
    pool(config.deliveries, 50, async (index) => {
      const body = JSON.stringify(toWebhookPayload(event(index)))
      const headers = { 'content-type': 'application/json', 'user-agent': 'floor/1.0' }
      if (config.secret) headers['x-signature'] = hmac(body, config.secret)
      const response = await fetch(config.urls[0], { method: 'POST', headers, body })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`HTTP ${response.status}`)
    }),
  )
} else if (config.mode === 'pending') {
  const destination = new WebhookDestination({
    webhooks: [{ url: config.urls[0] }],
    sharedSecret: config.secret,
    backoff: () => 3_600_000,
    // "attempted": each delivery has had its attempt and waits for its retry. Otherwise the
    // defaults: the failing URL's breaker opens and most deliveries wait for it, unsent.
    ...(config.attempted ? { breaker: false } : {}),
  })
  const deliveries = Array.from({ length: config.deliveries }, (_, index) => destination.deliver(event(index)))
  while (destination.pendingRetries < config.deliveries) await new Promise((resolve) => setTimeout(resolve, 50))
  result = { pending: destination.pendingRetries, ...(await memoryHeld()) }
  await destination.close({ timeout: 1_000 })
  await Promise.all(deliveries)
} else if (config.mode === 'pending-floor') {
  // What any engine must hold for a delivery waiting for its retry, on the undici floor: its id,
  // its body, the promise its caller awaits and that promise's resolver, and a record of as many
  // fields as eventwire's own. Each is sent once with Pool.request; nothing else is kept.
  const { randomUUID } = await import('node:crypto')
  const { Pool } = await import('undici')
  class Held {
    status = 'pending'
    attempts = 0
    lastStatus = undefined
    failure = undefined
    retryAfterMs = undefined
    lane = undefined
    dueAt = 0
    where = 'ready'
    slot = undefined
    signature = undefined
    deadline = 0
    open = 1
    startedAt = 0
    others = undefined
    constructor(id, body, resolve) {
      this.id = id
      this.body = body
      this.resolve = resolve
    }
  }
  const flatten = /^/
  const held = new Array(config.deliveries)
  const deliveries = Array.from({ length: config.deliveries }, (_, index) => {
    const id = randomUUID()
    // Flat, as eventwire keeps it (see checkEvent).
    flatten.test(id)
    const body = JSON.stringify(toWebhookPayload(event(index)))
    return new Promise((resolve) => {
      held[index] = new Held(id, body, resolve)
    })
  })
  const target = new URL(config.urls[0])
  const connection = new Pool(target.origin, { connections: 50 })
  await pool(config.deliveries, 50, async (index) => {
    const delivery = held[index]
    const headers = { 'content-type': 'application/json', 'x-signature': hmac(delivery.body, config.secret) }
    const response = await connection.request({ method: 'POST', path: target.pathname, headers, body: delivery.body })
    await response.body.dump()
    delivery.attempts = 1
    delivery.lastStatus = response.statusCode
  })
  result = { pending: held.length, ...(await memoryHeld()) }
  for (const delivery of held) delivery.resolve(delivery.lastStatus)
  await Promise.all(deliveries)
  await connection.close()
} else if (config.mode === 'sign') {
  const body = JSON.stringify(toWebhookPayload(event(1)))
  const signature = hmac(body, 's3cret')
  const time = async (operation) => {
    const started = performance.now()
    for (let index = 0; index < config.ops; index++) await operation()
    return ((performance.now() - started) * 1000) / config.ops
  }
  result = {
    createHmacUs: await time(() => hmac(body, 's3cret')),
    signPayloadUs: await time(() => signPayload(body, 's3cret')),
    verifySignatureUs: await time(() => verifySignature(body, signature, 's3cret')),
  }
}
console.log(JSON.stringify(result))
process.exit(0)
