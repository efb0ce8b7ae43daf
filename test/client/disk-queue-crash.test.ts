import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** What bench/disk-queue-crash.mjs prints. */
interface CrashResult {
  readonly runs: number
  readonly ends: Record<'calls' | 'answered' | 'unanswered' | 'flushed', number>
  readonly acknowledged: number
  readonly lost: number
  readonly duplicates: number
  readonly duplicateBound: number
  readonly unexplainedDuplicates: number
  readonly startsFailed: number
  readonly truncated: number
  readonly flipped: number
}

// The short version of the crash runs (bench/README.md has the full run's numbers): a sending
// process on the sources, killed with SIGKILL at moments the run picks from real signals (calls
// returned, requests answered or not), its files damaged between runs. A new seed each time; a
// failure names it, and `--seed` replays its choices.
it('loses no acknowledged message, sends twice only what was in flight, and every start succeeds, over 20 killed runs', async () => {
  const seed = String(Math.floor(Math.random() * 2 ** 31))
  const run = await promisify(execFile)(
    process.execPath,
    ['bench/disk-queue-crash.mjs', '--runs', '20', '--sources', '--seed', seed, '--max-count', '200'],
    { cwd: root, timeout: 120_000 },
  ).catch((error: { stdout?: string; stderr?: string }) => error)
  const result = JSON.parse(run.stdout?.trim().split('\n').at(-1) ?? '{}') as CrashResult
  const replay = `seed ${seed}: ${run.stderr}`
  expect(result, replay).toMatchObject({ runs: 20, lost: 0, unexplainedDuplicates: 0, startsFailed: 0 })
  expect(result.duplicates, replay).toBeLessThanOrEqual(result.duplicateBound)
  expect(result.acknowledged, replay).toBeGreaterThan(0)
}, 150_000)
