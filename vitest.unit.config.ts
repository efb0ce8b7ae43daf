import { configDefaults, defineConfig } from 'vitest/config'
import base from './vitest.config.js'
import { outsideUnit } from './test/helpers/unit-selection.js'

// `npm run test:unit`, the loop while editing: every suite but those that start redis-server or the
// CLI, or load dist/ (test/helpers/unit-selection.ts says which, from what each suite imports).
// So it skips the global setup, which builds dist/ and the CLI bundle.
// Files share a worker instead of each getting its own: isolation doubled the CPU time, and most
// suites wait on real timers and sockets, so more workers than cores finish sooner. What a file
// changes on globalThis is put back after it (test/helpers/unit-globals.ts).
// `npm test` runs every suite, each isolated.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    globalSetup: [],
    setupFiles: ['test/helpers/unit-globals.ts'],
    exclude: [...configDefaults.exclude, ...outsideUnit().keys()],
    isolate: false,
    maxWorkers: 4,
  },
})
