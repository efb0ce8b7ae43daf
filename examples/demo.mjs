// The main job, end to end on this machine with nothing but loopback: starts `eventwire listen`
// (a webhook receiver) and `eventwire dev` (the local ingest API, forwarding to the receiver) as
// child processes, sends a realistic stream of calls through the Client, and shows each one
// arriving at the receiver with its signature verified. Exits 0 only if every call arrived.
//
//   npm install && npm run demo
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Client } from 'eventwire'
import { AudienceSync } from 'eventwire/webhook'

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
const SECRET = 'demo-secret'
const WRITE_KEY = 'demo-write-key'
// Colours in the children's output when this demo runs on a terminal.
const env = { ...process.env, ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : { NO_COLOR: '1' }) }

const children = new Set()

/** Starts an `eventwire` command; `onLine` sees each line of its stdout. */
function start(args, onLine) {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  children.add(child)
  createInterface({ input: child.stdout }).on('line', onLine)
  child.once('close', () => children.delete(child))
  const exited = new Promise((resolve) => child.once('close', resolve))
  return {
    exited,
    stop: () => {
      child.kill('SIGINT')
      return exited
    },
  }
}

// Whatever ends this demo (success, a failure, a timeout, Ctrl+C), its children end with it.
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the demo`)
    process.exit(130)
  })
}

/**
 * A stream of lines (or records) that remembers what it saw, so a wait started after a line
 * arrived still finds it: each wait looks at the past first, then at what comes.
 */
function lineLog() {
  const seen = []
  const watchers = new Set()
  return {
    seen,
    push(line) {
      seen.push(line)
      for (const watch of watchers) watch()
    },
    /** Resolves once `done(seen)` is true, within 10 s. */
    until(what, done) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const value = done(seen)
          if (value === undefined || value === false) return
          watchers.delete(check)
          clearTimeout(timer)
          resolve(value)
        }
        const timer = setTimeout(() => {
          watchers.delete(check)
          reject(new Error(`timed out after 10 s waiting for ${what}`))
        }, 10_000)
        watchers.add(check)
        check()
      })
    },
  }
}

// 1. The receiver: prints every webhook with a verified/forged mark.
const receiverLines = lineLog()
const receiver = start(['listen', '--port', '0', '--secret', SECRET], (line) => {
  console.log(`  receiver │ ${line}`)
  receiverLines.push(line)
})
const receiverUrl = await receiverLines.until('eventwire listen to start', (lines) =>
  lines.map((line) => /http:\/\/127\.0\.0\.1:\d+/.exec(line)?.[0]).find(Boolean),
)

// 2. The platform: the ingest API the client sends to, forwarding every event to the receiver.
const activity = lineLog()
const dev = start(
  ['dev', '--port', '0', '--json', '--write-key', WRITE_KEY, '--secret', SECRET, '--webhook', `${receiverUrl}/hooks`],
  (line) => {
    const record = JSON.parse(line)
    if (record.event === 'batch') console.log(`  dev      │ accepted a batch of ${record.messages} event(s)`)
    if (record.event === 'skipped')
      console.log(`  dev      │ skipped ${record.type} "${record.label}": its integrations turn Webhooks off`)
    activity.push(record)
  },
)
const devUrl = await activity.until(
  'eventwire dev to start',
  (records) => records.find((record) => record.event === 'listening')?.url,
)
console.log(`\neventwire dev on ${devUrl}, forwarding to ${receiverUrl}/hooks, signed with "${SECRET}"\n`)

// 3. The app: a visitor browses, signs up (an alias sequence), joins a team; an
// audience is synced twice; one internal event is kept away from webhooks.
const client = new Client(WRITE_KEY, { endpoint: devUrl, flushAt: 5 })
const sent = []
client.on('sent', (info) => sent.push(info))
client.on('error', (error) => console.error(`client error ${error.code}: ${error.message}`))

// An alias sequence: calls under the visitor's first id, then alias, identify, and calls under the new id.
client.page({ userId: 'guest-7f3a', name: 'Pricing', category: 'Marketing', properties: { path: '/pricing' } })
client.track({ userId: 'guest-7f3a', event: 'Plan Selected', properties: { plan: 'pro' } })
client.alias({ previousId: 'guest-7f3a', userId: 'user-42' })
client.identify({ userId: 'user-42', traits: { email: 'ada@example.com', plan: 'pro' } })
client.track({ userId: 'user-42', event: 'Signed Up', properties: { plan: 'pro', source: 'ad' } })
client.group({ userId: 'user-42', groupId: 'acme', traits: { name: 'Acme Inc', employees: 20 } })
client.screen({ userId: 'user-42', name: 'Dashboard' })
client.track({ userId: 'user-42', event: 'Debug Snapshot', integrations: { Webhooks: false } })

// An audience, synced twice: every member first, then only who joined or left.
const audience = new AudienceSync('Power Users')
const syncs = [...audience.sync(['user-42', 'user-7']), ...audience.sync(['user-42', 'user-9'])]
for (const { type, ...call } of syncs) client.identify(call)

const calls = 8 + syncs.length
const outcomes = ['delivered', 'failed', 'skipped', 'unroutable']
const allHandled = activity.until(
  `dev to handle all ${calls} calls`,
  (records) => records.filter((record) => outcomes.includes(record.event)).length >= calls,
)
await client.close()
await allHandled

// 4. Someone without the secret: the receiver marks the request forged and answers 401.
const forgedSeen = receiverLines.until('the receiver to print the forged request', (lines) =>
  lines.some((line) => line.includes('Refund Issued')),
)
const forged = await fetch(`${receiverUrl}/hooks`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-signature': '0'.repeat(40) },
  body: JSON.stringify({
    version: 1,
    type: 'track',
    userId: 'user-42',
    event: 'Refund Issued',
    timestamp: new Date().toISOString(),
    context: {},
  }),
})
await forgedSeen

await dev.stop()
await receiver.stop()

const count = (event) => activity.seen.filter((record) => record.event === event).length
const verified = Number(/(\d+) verified/.exec(receiverLines.seen.at(-1))?.[1] ?? 0)
console.log('\nsummary')
console.log(
  `  client    ${calls} calls in ${sent.length} batches, every one answered HTTP ${[...new Set(sent.map((info) => info.status))].join(', ')}`,
)
console.log(
  `  dev       ${count('delivered')} delivered, ${count('skipped')} skipped by integrations, ${count('failed')} failed, ${count('unroutable')} not forwarded`,
)
console.log(`  receiver  ${verified} verified; the demo's own forged request was answered ${forged.status}`)

const ok =
  sent.reduce((total, info) => total + info.messages.length, 0) === calls &&
  count('delivered') === calls - 1 &&
  verified === calls - 1 &&
  forged.status === 401
console.log(ok ? `\nall ${calls - 1} forwarded calls arrived verified` : '\nsomething did not arrive: see above')
process.exit(ok ? 0 : 1)
