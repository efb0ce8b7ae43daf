import { build } from 'esbuild'
import { CLI_BUNDLE } from './helpers/cli.js'

/**
 * Bundles the CLI from the sources once, the way tsup bundles dist/cli.js (esbuild, packages left
 * as imports), so CLI tests start real `node` processes at a third of tsx's start-up cost. It
 * lives inside the repository so its package imports resolve to node_modules.
 */
export default async function setup(): Promise<void> {
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
}
