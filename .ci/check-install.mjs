// A contributor's `npm install` on a fresh clone: after `npm ci`, it must leave package-lock.json as
// committed and warn of no engine, run on the engines floor. The floor is the `node` package the
// runtime matrix installs into .runtimes/floor; npm is the one on the PATH, run by that node.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { installPinned } from '../scripts/install-pinned.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
/** The oldest Node that `engines` admits (">=20.18.1" -> 20.18.1). */
const floor = /^>=\s*(\d+\.\d+\.\d+)$/.exec(pkg.engines.node)?.[1]
if (floor === undefined) throw new Error(`engines.node is not ">=x.y.z": ${pkg.engines.node}`)

const floorTools = join(root, '.runtimes', 'floor')
installPinned(floorTools, [`node@${floor}`])
const env = { ...process.env, PATH: `${join(floorTools, 'node_modules', '.bin')}${delimiter}${process.env.PATH}` }
const run = (command, args) => spawnSync(command, args, { cwd: root, env, encoding: 'utf8' })

const problems = []
const version = run('node', ['--version']).stdout.trim()
if (version !== `v${floor}`) problems.push(`node on the PATH is ${version}, not the floor v${floor}`)

const install = run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund'])
const output = `${install.stdout}${install.stderr}`
process.stdout.write(output)
if (install.status !== 0) problems.push(`npm install exited with ${install.status}`)
if (output.includes('EBADENGINE')) problems.push(`npm install on Node ${floor} warned EBADENGINE (above)`)
if (run('git', ['diff', '--quiet', '--', 'package-lock.json']).status !== 0)
  problems.push('npm install changed package-lock.json: run it, and commit the lockfile it writes')

if (problems.length > 0) {
  console.error(problems.map((problem) => `check-install: ${problem}`).join('\n'))
  process.exit(1)
}
console.log(`check-install: on Node ${floor}, npm install kept package-lock.json and warned of no engine`)
