// The main job never flakes and never leaves a process behind: runs `examples/demo.mjs` 20 times
// in a row (each must exit 0), then ends it by Ctrl+C, by SIGTERM and by a failure (its receiver
// killed, so a wait times out), and after every run checks that no `eventwire` child it started
// is still alive. Needs `npm run build` first.
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const demo = fileURLToPath(new URL('../examples/demo.mjs', import.meta.url))
const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
const RUNS = 20

/** The pids and command lines of the `eventwire` processes started from this checkout's dist/cli.js. */
function cliProcesses() {
  const { stdout } = spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
  return stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.includes(cli))
}

/** Waits until no such process is left, for at most `ms` (a SIGKILLed child is reaped quickly, not at once). */
async function noneLeft(ms = 2_000) {
  const deadline = Date.now() + ms
  for (;;) {
    const left = cliProcesses()
    if (left.length === 0) return
    if (Date.now() > deadline) {
      for (const line of left) process.kill(Number(line.split(' ')[0]), 'SIGKILL')
      throw new Error(`the demo left ${left.length} process(es) behind:\n${left.join('\n')}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * Runs the demo; `onLine(line, child)` sees its stdout. Resolves with its exit code or signal and
 * what it printed.
 */
function run(onLine = () => {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [demo], { cwd: root, env: { ...process.env, NO_COLOR: '1' } })
    let output = ''
    let pending = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) onLine(line, child)
    })
    child.stderr.on('data', (chunk) => {
      output += chunk
    })
    child.once('close', (code, signal) => resolve({ code, signal, output }))
  })
}

const stray = cliProcesses()
if (stray.length > 0) throw new Error(`eventwire processes already running before the check:\n${stray.join('\n')}`)

for (let index = 1; index <= RUNS; index++) {
  const started = Date.now()
  const { code, output } = await run()
  if (code !== 0) throw new Error(`demo run ${index} of ${RUNS} exited ${code}:\n${output}`)
  await noneLeft()
  console.log(`demo run ${index}/${RUNS}: exit 0 in ${Date.now() - started} ms, no process left`)
}

/** Ends the demo once both children are up, by `stop(child)`; checks its exit and that nothing is left. */
async function endedBy(name, stop, expected) {
  let stopped = false
  const { code, output } = await run((line, child) => {
    if (!stopped && line.startsWith('eventwire dev on')) {
      stopped = true
      stop(child)
    }
  })
  if (!stopped) throw new Error(`${name}: the demo never reached "eventwire dev on":\n${output}`)
  if (code !== expected) throw new Error(`${name}: the demo exited ${code}, expected ${expected}:\n${output}`)
  await noneLeft()
  console.log(`demo ended by ${name}: exit ${code}, no process left`)
}

await endedBy('Ctrl+C (SIGINT)', (child) => child.kill('SIGINT'), 130)
await endedBy('SIGTERM', (child) => child.kill('SIGTERM'), 130)
await endedBy(
  'a failure (its receiver killed)',
  () => {
    const receiver = cliProcesses().find((line) => line.includes(' listen '))
    if (!receiver) throw new Error('no eventwire listen process to kill')
    process.kill(Number(receiver.split(' ')[0]), 'SIGKILL')
  },
  1,
)
console.log(`demo: ${RUNS}/${RUNS} runs passed; no process outlived it on success, Ctrl+C, SIGTERM or failure`)
