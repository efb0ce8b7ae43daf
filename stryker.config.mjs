// @ts-check
// Mutation testing of the critical modules: `npm run test:mutation` (CONTRIBUTING.md says how to
// read the report). Pass `--mutate <file>` to run one file.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  coverageAnalysis: 'perTest',
  mutate: [
    'src/core/validate.ts',
    'src/core/json-value.ts',
    'src/core/utf8.ts',
    'src/client/batch.ts',
    'src/client/transport.ts',
    'src/client/retry-policy.ts',
    'src/client/send-loop.ts',
    'src/webhook/signature.ts',
    'src/webhook/settings.ts',
    'src/webhook/private-address.ts',
    'src/webhook/ip-address.ts',
    'src/webhook/payload.ts',
    'src/webhook/round.ts',
    'src/core/queue.ts',
    'src/client/holdings.ts',
    'src/webhook/scheduler.ts',
  ],
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  concurrency: 2,
  timeoutMS: 20_000,
  thresholds: { high: 95, low: 90, break: 90 },
}
