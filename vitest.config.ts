import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  resolve: {
    // Examples import the package by name; in tests that name means the sources.
    alias: [
      { find: /^eventwire\/webhook$/, replacement: source('./src/webhook/index.ts') },
      { find: /^eventwire$/, replacement: source('./src/index.ts') },
      // Tests run on Node: the sources get Node's platform modules, as the package does there.
      { find: /^#eventwire\/client-transport$/, replacement: source('./src/client/platform/node.ts') },
      { find: /^#eventwire\/webhook-platform$/, replacement: source('./src/webhook/platform/node.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
  },
})
