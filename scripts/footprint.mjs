// What `npm install <package>` adds to an empty project: packages and bytes on disk, for eventwire
// (from the packed tarball of this checkout) and the peers the README compares it with.
//
//   node scripts/footprint.mjs
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const PEERS = ['@segment/analytics-node', 'posthog-node']
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })

/** Bytes of every file under `dir` (apparent size, as `du --apparent-size` counts). */
function bytesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const path = join(dir, entry.name)
    return sum + (entry.isDirectory() ? bytesUnder(path) : entry.isFile() ? statSync(path).size : 0)
  }, 0)
}

function measure(spec, label) {
  const dir = mkdtempSync(join(tmpdir(), 'eventwire-footprint-'))
  try {
    writeFileSync(join(dir, 'package.json'), '{"private":true}\n')
    npm(['install', '--no-audit', '--no-fund', '--omit=dev', spec], dir)
    const packages = npm(['ls', '--all', '--parseable'], dir).trim().split('\n').length - 1
    // du counts whole file-system blocks: what the install really takes on this disk.
    const disk =
      Number(execFileSync('du', ['-sk', join(dir, 'node_modules')], { encoding: 'utf8' }).split('\t')[0]) * 1024
    return { label, packages, bytes: bytesUnder(join(dir, 'node_modules')), disk }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const out = mkdtempSync(join(tmpdir(), 'eventwire-pack-'))
mkdirSync(out, { recursive: true })
npm(['run', 'build'], root)
const [{ filename, version }] = JSON.parse(npm(['pack', '--json', '--pack-destination', out], root))
const rows = [measure(join(out, filename), `eventwire ${version}`)]
for (const peer of PEERS) {
  const latest = npm(['view', peer, 'version'], root).trim()
  rows.push(measure(`${peer}@${latest}`, `${peer} ${latest}`))
}
rmSync(out, { recursive: true, force: true })
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`
console.log('| package | packages installed | bytes of files | on disk (du) |\n| --- | --- | --- | --- |')
for (const row of rows) console.log(`| ${row.label} | ${row.packages} | ${mb(row.bytes)} | ${mb(row.disk)} |`)
