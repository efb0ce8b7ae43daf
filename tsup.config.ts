import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    webhook: 'src/webhook/index.ts',
    'webhook-node': 'src/webhook/node.ts',
    'webhook-bullmq': 'src/webhook/bullmq/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
  platform: 'neutral',
  // Dependencies stay imports: users' bundlers dedupe them, and edge builds never see undici.
  external: ['ky', 'undici', 'bullmq', 'ioredis'],
})
