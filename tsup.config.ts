import { defineConfig } from 'tsup'

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      webhook: 'src/webhook/index.ts',
      'webhook-node': 'src/webhook/node.ts',
      'webhook-bullmq': 'src/webhook/bullmq/index.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    // The CLI build below writes cli.js beside these; both builds run at once.
    clean: ['!cli.js', '!cli.js.map'],
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
    // Dependencies stay imports: users' bundlers dedupe them, and edge builds never see undici.
    external: ['ky', 'undici', 'bullmq', 'ioredis'],
  },
  {
    // The `eventwire` command: Node only, ESM only, one file (it shares no state with the library).
    entry: { cli: 'src/cli/bin.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    // Keep `node:` on built-in imports (tsup strips it by default): Node >= 20 needs no help, and
    // a reader of dist/cli.js sees at a glance that it imports nothing but Node and ky/undici.
    removeNodeProtocol: false,
  },
])
