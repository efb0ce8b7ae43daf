import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  resolve: {
    // Examples import the package by name; in tests that name means the sources.
    alias: [
      { find: /^eventwire\/webhook$/, replacement: source('./src/webhook/node.ts') },
      { find: /^eventwire$/, replacement: source('./src/node.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
  },
})
