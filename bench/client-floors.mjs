// The client's Node targets against its floors, in alternated runs of one process each (client-run.mjs):
// steady 20,000 events/s, CPU per 1k events against the floor with the same flush policy; a burst
// of 100,000, wall time and peak RSS against the floor. Builds to compare are given by their entry
// (`dist/index.js` of a checkout, built); `eventwire` alone is this checkout's `dist/`, built first.
//
//   node bench/client-floors.mjs '{"pairs":3,"builds":{"before":"/tmp/old/dist/index.js"}}'
//
// Prints each run, then the medians and each build's ratio to its floor within the same pair.
import { execFileSync, spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const { pairs = 3, builds = {}, burst = 100_000, steady = 200_000, rate = 20_000 } = JSON.parse(process.argv[2] ?? '{}')
execFileSync('npm', ['run', 'build'], { cwd: join(here, '..'), stdio: 'ignore' })
const entries = { eventwire: join(here, '..', 'dist', 'index.js'), ...builds }

const sink = spawn(process.execPath, [join(here, 'sink.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] })
const port = await new Promise((resolve) => sink.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))))
const url = `http://127.0.0.1:${port}`

/** One run of `library` in a fresh process; `entry`: the build eventwire is imported from. */
async function run(library, mode, events, entry) {
  await fetch(`${url}/reset`, { method: 'POST' })
  const output = execFileSync(
    process.execPath,
    [join(here, 'client-run.mjs'), JSON.stringify({ library, mode, events, sink: url, rate })],
    { encoding: 'utf8', env: { ...process.env, ...(entry ? { EVENTWIRE_ENTRY: entry } : {}) }, timeout: 300_000 },
  )
  const stats = await (await fetch(`${url}/stats`)).json()
  if (stats.unique !== events) throw new Error(`${library}: the sink saw ${stats.unique} of ${events} events`)
  return JSON.parse(output.trim().split('\n').at(-1))
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const rows = { steady: {}, burst: {} }
const ratios = { steady: {}, burst: {} }
const note = (table, name, value) => {
  table[name] ??= []
  table[name].push(value)
}

try {
  for (let pair = 0; pair < pairs; pair++) {
    // Alternated: the floor runs first in odd pairs, last in even ones.
    const order = pair % 2 === 0 ? Object.keys(entries) : Object.keys(entries).reverse()
    const floorFirst = pair % 2 === 1
    for (const [mode, events, floorName] of [
      ['steady', steady, 'floorSamePolicy'],
      ['burst', burst, 'floor'],
    ]) {
      const results = {}
      if (floorFirst) results.floor = await run(floorName, mode, events)
      for (const name of order) results[name] = await run('eventwire', mode, events, entries[name])
      if (!floorFirst) results.floor = await run(floorName, mode, events)
      for (const [name, result] of Object.entries(results)) {
        const cpuPer1k = (result.cpuMs / events) * 1000
        note(rows[mode], name, { cpuPer1k, wallMs: result.wallMs, peakRssMb: result.peakRssMb })
        console.log(
          JSON.stringify({
            pair,
            mode,
            name,
            cpuPer1k: +cpuPer1k.toFixed(2),
            wallMs: Math.round(result.wallMs),
            peakRssMb: Math.round(result.peakRssMb),
          }),
        )
        if (name === 'floor') continue
        note(ratios[mode], name, {
          cpu: result.cpuMs / results.floor.cpuMs,
          wall: result.wallMs / results.floor.wallMs,
          rss: result.peakRssMb / results.floor.peakRssMb,
        })
      }
    }
  }
  for (const mode of ['steady', 'burst']) {
    for (const [name, runs] of Object.entries(rows[mode])) {
      const summary = {
        mode,
        name,
        cpuPer1k: +median(runs.map((r) => r.cpuPer1k)).toFixed(2),
        wallMs: Math.round(median(runs.map((r) => r.wallMs))),
        peakRssMb: Math.round(median(runs.map((r) => r.peakRssMb))),
      }
      const own = ratios[mode][name]
      if (own) {
        summary.cpuRatio = +median(own.map((r) => r.cpu)).toFixed(2)
        summary.wallRatio = +median(own.map((r) => r.wall)).toFixed(2)
        summary.rssRatio = +median(own.map((r) => r.rss)).toFixed(2)
      }
      console.log(JSON.stringify({ median: summary }))
    }
  }
} finally {
  sink.kill()
}
