// Crash runs of the disk queue: a sending process (disk-queue-sender.mjs, a DurableClient) is
// killed with SIGKILL at random moments, its segment files are truncated or have bytes flipped
// between runs, and a receiver on 127.0.0.1 records every messageId it acknowledged. Then:
// - lost: ids whose call returned (the sender printed them) that the receiver never acknowledged,
//   leaving out the records this script damaged itself. Must be 0.
// - duplicates: ids acknowledged more than once. Each must have been in flight at a kill (one
//   request at a time): in the last batch the receiver answered before it, or in a request that
//   arrived after it.
// - starts: every start must succeed, whatever the files hold.
// Prints one JSON line; exits 1 when a check fails.
//
//   npm run build && node bench/disk-queue-crash.mjs --runs 1000
//   node bench/disk-queue-crash.mjs --runs 20 --sources        # the sources, through tsx (the CI test)
//   node bench/disk-queue-crash.mjs --runs 50 --seed 7         # another sequence of choices
//
// Each run picks how it ends, from real signals only: after the sender printed k calls; at the
// receiver's j-th request, just after answering it 200 (the sender may die before it reads the
// answer); or at that request before answering; or once the sender flushed everything.
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '100' },
    seed: { type: 'string', default: '1' },
    sources: { type: 'boolean', default: false },
    'max-count': { type: 'string', default: '400' },
  },
})
const runs = Number(values.runs)
const maxCount = Number(values['max-count'])
const root = join(import.meta.dirname, '..')
const MAGIC = Buffer.from('EWQ1')

/** mulberry32: the same choices for the same seed. */
let state = Number(values.seed) >>> 0
function random() {
  state = (state + 0x6d2b79f5) >>> 0
  let t = state
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const below = (n) => Math.floor(random() * n)

const acknowledged = new Set()
/** Times the receiver answered 2xx to a batch holding each id. */
const delivered = new Map()
/** Ids whose records this script damaged before they were delivered. */
const damaged = new Set()
/** Ids of the last batch answered 2xx before each kill: what a kill may send twice. */
const inFlight = new Set()
let duplicateBound = 0
const ends = { calls: 0, answered: 0, unanswered: 0, flushed: 0 }
const totals = { damagedRecords: 0, truncated: 0, flipped: 0, lockGarbage: 0, corruptSkipped: 0, resent: 0 }
let startsFailed = 0
const failures = []

/** What the receiver does with this run's requests; set per run. */
let plan = { mode: 'calls', at: 0, kill: () => undefined }
let requestsThisRun = 0
/** Whether this run's sender was killed: a request that arrives after it was sent before it. */
let killedThisRun = false
let lastAnswered = []

const receiver = createServer((request, response) => {
  const chunks = []
  request.on('data', (chunk) => chunks.push(chunk))
  request.on('end', () => {
    const ids = JSON.parse(Buffer.concat(chunks).toString('utf8')).batch.map((message) => message.messageId)
    const index = ++requestsThisRun
    if (plan.mode === 'unanswered' && index === plan.at) {
      plan.kill('unanswered')
      response.destroy()
      return
    }
    if (below(20) === 0) {
      response.writeHead(503).end()
      return
    }
    for (const id of ids) delivered.set(id, (delivered.get(id) ?? 0) + 1)
    lastAnswered = ids
    if (killedThisRun) {
      // Sent before the kill, read after it: in flight too.
      for (const id of ids) inFlight.add(id)
      duplicateBound += ids.length
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    if (plan.mode === 'answered' && index === plan.at) plan.kill('answered')
  })
})
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const endpoint = `http://127.0.0.1:${receiver.address().port}`
const directory = mkdtempSync(join(tmpdir(), 'eventwire-crash-'))

/** The messageIds of the records in `bytes[start, end)`. */
function idsIn(bytes, start, end) {
  return [...bytes.toString('latin1', start, end).matchAll(/"messageId":"([^"]+)"/g)].map((match) => match[1])
}

/** Truncates a segment, or flips a few of its bytes, and notes whose records that hit. */
function damage() {
  const logs = readdirSync(directory).filter((name) => name.endsWith('.log'))
  if (logs.length === 0) return
  const path = join(directory, logs[below(logs.length)])
  const bytes = readFileSync(path)
  if (bytes.length === 0) return
  const hit = []
  if (random() < 0.5) {
    const length = below(bytes.length)
    hit.push(...idsIn(bytes, Math.max(0, bytes.lastIndexOf(MAGIC, length)), bytes.length))
    truncateSync(path, length)
    totals.truncated++
  } else {
    const flipped = Buffer.from(bytes)
    for (let flips = 1 + below(3); flips > 0; flips--) {
      const at = below(bytes.length)
      flipped[at] ^= 1 + below(255)
      const start = Math.max(0, bytes.lastIndexOf(MAGIC, at))
      const next = bytes.indexOf(MAGIC, at + 1)
      hit.push(...idsIn(bytes, start, next === -1 ? bytes.length : next))
    }
    writeFileSync(path, flipped)
    totals.flipped++
  }
  for (const id of hit) {
    if (!delivered.has(id)) damaged.add(id)
  }
  totals.damagedRecords += new Set(hit).size
}

/** One run of the sender: started, left to send, killed as the plan says. */
function runOnce(run, count) {
  return new Promise((resolve) => {
    const args = values.sources ? ['--import', 'tsx', 'bench/disk-queue-sender.mjs'] : ['bench/disk-queue-sender.mjs']
    const env = { ...process.env, DIRECTORY: directory, ENDPOINT: endpoint, RUN: `r${run}`, COUNT: String(count) }
    if (values.sources) env.EVENTWIRE_DISK_QUEUE = join(root, 'src/client/disk-queue/index.ts')
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let ready = false
    let calls = 0
    let ended
    let stderr = ''
    let pending = ''
    const kill = (how) => {
      if (ended !== undefined) return
      ended = how
      killedThisRun = true
      // What the receiver answered last may not have reached the sender: it may come again.
      for (const id of lastAnswered) inFlight.add(id)
      duplicateBound += lastAnswered.length
      child.kill('SIGKILL')
    }
    const roll = below(4)
    plan = {
      mode: ['calls', 'answered', 'unanswered', 'calls'][roll],
      at: roll === 0 || roll === 3 ? below(count + 1) : 1 + below(Math.max(1, Math.ceil(count / 20))),
      kill,
    }
    requestsThisRun = 0
    lastAnswered = []
    killedThisRun = false
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.stdout.on('data', (chunk) => {
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop()
      for (const line of lines) {
        if (line.startsWith('ready ')) {
          ready = true
          const recovery = JSON.parse(line.slice(6))
          totals.corruptSkipped += recovery.corrupt
          totals.resent += recovery.resent
          if (plan.mode === 'calls' && plan.at === 0) kill('calls')
        } else if (line === 'flushed') kill('flushed')
        else {
          acknowledged.add(line)
          calls++
          if (plan.mode === 'calls' && calls >= plan.at) kill('calls')
        }
      }
    })
    child.on('exit', () => {
      if (!ready) {
        startsFailed++
        failures.push(`run ${run}: the start failed: ${stderr.slice(0, 2000)}`)
      } else ends[ended ?? 'flushed']++
      resolve()
    })
  })
}

const started = Date.now()
for (let run = 0; run < runs; run++) {
  await runOnce(run, below(maxCount + 1))
  if (random() < 0.3) damage()
  if (random() < 0.05) {
    writeFileSync(join(directory, 'lock'), Buffer.from([0xff, 0x00, 0x13]))
    totals.lockGarbage++
  }
}
// A last start sends what is left, and nothing kills it before it says so.
plan = { mode: 'none', at: 0, kill: () => undefined }
killedThisRun = false
await new Promise((resolve) => {
  const args = values.sources ? ['--import', 'tsx', 'bench/disk-queue-sender.mjs'] : ['bench/disk-queue-sender.mjs']
  const env = { ...process.env, DIRECTORY: directory, ENDPOINT: endpoint, RUN: 'last', COUNT: '0' }
  if (values.sources) env.EVENTWIRE_DISK_QUEUE = join(root, 'src/client/disk-queue/index.ts')
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk) => {
    out += chunk
    if (out.includes('flushed\n')) child.kill('SIGKILL')
  })
  child.on('exit', () => {
    if (!out.startsWith('ready ')) startsFailed++
    else totals.resent += JSON.parse(out.split('\n')[0].slice(6)).resent
    resolve()
  })
})
receiver.close()
rmSync(directory, { recursive: true, force: true })

const lost = [...acknowledged].filter((id) => !delivered.has(id) && !damaged.has(id))
const duplicated = [...delivered].filter(([, times]) => times > 1)
const duplicates = duplicated.reduce((sum, [, times]) => sum + times - 1, 0)
const unexplained = duplicated.filter(([id]) => !inFlight.has(id)).map(([id]) => id)
const result = {
  runs,
  seed: Number(values.seed),
  sources: values.sources,
  seconds: Math.round((Date.now() - started) / 100) / 10,
  ends,
  acknowledged: acknowledged.size,
  delivered: delivered.size,
  lost: lost.length,
  damagedUndelivered: damaged.size,
  ...totals,
  duplicates,
  duplicateBound,
  unexplainedDuplicates: unexplained.length,
  startsFailed,
}
console.log(JSON.stringify(result))
if (lost.length > 0) console.error(`lost: ${lost.slice(0, 20).join(' ')}`)
if (unexplained.length > 0) console.error(`duplicates not in flight at a kill: ${unexplained.slice(0, 20).join(' ')}`)
for (const failure of failures.slice(0, 5)) console.error(failure)
process.exitCode = lost.length > 0 || unexplained.length > 0 || duplicates > duplicateBound || startsFailed > 0 ? 1 : 0
