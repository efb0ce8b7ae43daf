import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { CLI_BUNDLE } from './helpers/cli.js'
import { isInstalled, SERVICES } from './helpers/services.js'

/** What is skipped for want of a system service, and how to get it; empty when nothing is. */
function missingServices(): string {
  return SERVICES.filter((service) => !isInstalled(service.executable))
    .map(
      (service) =>
        `${service.executable} is not installed, so these suites are skipped: ${service.suites.join(', ')}.\nInstall it with: ${service.install}`,
    )
    .join('\n')
}

/**
 * Bundles the CLI from the sources once, the way tsup bundles dist/cli.js (esbuild, packages left
 * as imports), so CLI tests start real `node` processes at a third of tsx's start-up cost. It
 * lives inside the repository so its package imports resolve to node_modules.
 *
 * It also builds dist/ once, for the suites that load the built package (test/error-guard.test.ts,
 * test/package.test.ts): each building it for itself would race, one deleting files the other loads.
 *
 * Suites that need a real service skip when it is missing, and this says so before and after the
 * run; under `CI=true` a missing service fails the run instead, so CI cannot pass by skipping.
 */
export default async function setup(): Promise<() => void> {
  const missing = missingServices()
  if (missing !== '' && process.env['CI'] === 'true') throw new Error(`CI=true and ${missing}`)
  if (missing !== '') console.warn(`\n${missing}\n`)
  const building = promisify(execFile)('npm', ['run', 'build'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    timeout: 170_000,
  })
  await build({
    entryPoints: [new URL('../src/cli/bin.ts', import.meta.url).pathname],
    outfile: CLI_BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
  })
  await building
  return () => {
    if (missing !== '') console.warn(`\n${missing}\n`)
  }
}
