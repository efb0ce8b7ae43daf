import { defineConfig, mergeConfig } from 'vitest/config'
import base from './vitest.config.js'
import { LoadFailureReporter } from './test/helpers/load-failure-reporter.js'

// The tests StrykerJS runs against each mutant: those that exercise the sources in this process.
// Tests that start the CLI, workers or another runtime as child processes run code a mutant
// cannot be switched on in, so they would only slow the run without telling anything.
const config = mergeConfig(
  base,
  defineConfig({
    test: {
      reporters: ['default', new LoadFailureReporter()],
      exclude: [
        'test/cli/**',
        'test/runtimes/**',
        'test/webhook/bullmq-processes.test.ts',
        'test/webhook/clock-skew.test.ts',
        'test/bench-smoke.test.ts',
        'test/client/disk-queue-crash.test.ts',
        'test/error-guard.test.ts',
        'test/package.test.ts',
        'node_modules/**',
      ],
    },
  }),
)

// `MUTATION_TESTS=<file>,<file>` narrows a run to those suites, for a module whose related suites are
// slow. Not Stryker's --testFiles: its 9.6 runner switches module-level mutants on after the module
// has loaded, so they survive (stryker-js issue 6144).
const only = process.env['MUTATION_TESTS']
// Named suites run even where the whole run leaves them out: test/cli's in-process files
// (serve-server, serve-config) test the CLI's sources in this process.
if (only !== undefined && only !== '')
  config.test = { ...config.test, include: only.split(','), exclude: ['node_modules/**'] }

export default config
