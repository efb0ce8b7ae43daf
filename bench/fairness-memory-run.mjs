// Fairness between destinations in memory: does one destination's backlog hold up another's
// events on one WebhookDestination? One receiver process (fairness-run.mjs's), one engine in this
// process serving destinations `big` and `small`, each one URL on the receiver. `big`'s receiver
// answers after `bigDelayMs`: slower than its events come, as a receiver behind a backlog is, and
// so this process and the receiver are not saturated (on two cores they would be at full speed,
// and that would be measured instead of the backlog). `small` gets
// `smallRate` events a second, each stamped with when deliver() took it; the receiver notes when
// each arrives. Measured three ways, `seconds` each:
// - alone: nothing else is sent;
// - busy: `big` is sent a steady `busyShare` of the rate its backlog drained at, so the engine is
//   as busy but nothing piles up;
// - backlog: `big` has `backlog` events taken by deliver() before `small` starts.
// Prints progress on stderr and one JSON line on stdout, as fairness-run.mjs does.
//
//   node bench/fairness-memory-run.mjs '{"backlog":100000}'
//   EVENTWIRE_WEBHOOK_ENTRY=/path/to/other/dist/webhook.js node bench/fairness-memory-run.mjs
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { epochMs, event, log, measurePhase, report, round, steadily } from './fairness-phase.mjs'

const config = JSON.parse(process.argv[2] ?? '{}')
const here = import.meta.dirname
const webhookEntry = process.env.EVENTWIRE_WEBHOOK_ENTRY ?? 'eventwire/webhook'

async function main() {
  const seconds = config.seconds ?? 15
  const smallRate = config.smallRate ?? 20
  const backlog = config.backlog ?? 100_000
  const busyShare = config.busyShare ?? 0.7
  const bigDelayMs = config.bigDelayMs ?? 20
  const receiver = spawn(
    process.execPath,
    [join(here, 'fairness-run.mjs'), JSON.stringify({ role: 'receiver', bigDelayMs })],
    {
      stdio: ['ignore', 2, 'inherit', 'ipc'],
    },
  )
  const { port } = await new Promise((resolve) => receiver.on('message', (message) => resolve(message)))
  const url = `http://127.0.0.1:${port}`
  const stats = async (method = 'GET') => (await fetch(`${url}/_stats`, { method })).json()
  const { WebhookDestination } = await import(webhookEntry)
  const fresh = () => {
    const engine = new WebhookDestination({})
    for (const id of ['big', 'small']) engine.destinations.set({ id, webhooks: [{ url: `${url}/${id}` }] })
    return engine
  }
  let engine = fresh()
  let sent = 0
  let bigSent = 0
  function fillBig(count) {
    for (let done = 0; done < count; done++) {
      void engine.deliver(event(`big-${bigSent++}`, { at: 0 }), { destination: 'big' })
    }
  }
  /** A phase of `small`'s stream, each event stamped with when deliver() took it; settled once every one is. */
  const phase = (name, during) => {
    const results = []
    return measurePhase({
      name,
      seconds,
      smallRate,
      stats,
      send: (at) => {
        results.push(engine.deliver(event(`small-${sent++}`, { at }), { destination: 'small' }))
      },
      during,
      settle: () => Promise.all(results),
    })
  }

  const filled = epochMs()
  fillBig(backlog)
  log(`backlog of ${backlog} taken in ${round((epochMs() - filled) / 1000)} s`)
  const backlogPhase = await phase('backlog')
  const left = engine.backlog().find((entry) => entry.url.endsWith('/big'))
  log(`left of big's backlog: ${left ? left.queued + left.inFlight : 0}`)
  // What is left is dropped: the next phases start from a fresh engine.
  await engine.close({ timeout: 1_000 })
  engine = fresh()
  const alone = await phase('alone')
  const busyRate = Math.round(backlogPhase.bigPerSecond * busyShare)
  const busy = await phase('busy', (until) => steadily(busyRate, until, fillBig))
  await engine.close({ timeout: 1_000 })
  receiver.kill()
  report(
    { seconds, smallRate, backlog, busyShare, bigDelayMs, busyRate, entry: webhookEntry },
    { alone, busy, backlog: backlogPhase },
  )
}

await main()
