// Installs exact package versions into a folder of their own with npm (no lockfile: these are
// tools, not dependencies of the package), once: a marker remembers what was installed.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export function installPinned(dir, specs) {
  const marker = join(dir, 'installed.json')
  if (existsSync(marker) && readFileSync(marker, 'utf8') === JSON.stringify(specs)) return
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), '{"private":true}\n')
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', ...specs], {
    cwd: dir,
    stdio: 'inherit',
  })
  writeFileSync(marker, JSON.stringify(specs))
}
