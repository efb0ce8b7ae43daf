import { defineConfig } from 'tsup'

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      webhook: 'src/webhook/index.ts',
      'webhook-node-only': 'src/webhook/node-only.ts',
      'webhook-bullmq': 'src/webhook/bullmq/index.ts',
      'webhook-otel': 'src/webhook/otel/index.ts',
      'disk-queue': 'src/client/disk-queue/index.ts',
      // What `#eventwire/client-transport` and `#eventwire/webhook-platform` name per runtime (package.json "imports").
      'client-platform-browser': 'src/client/platform/browser.ts',
      'client-platform-node': 'src/client/platform/node.ts',
      'client-platform-web': 'src/client/platform/web.ts',
      'webhook-platform-node': 'src/webhook/platform/node.ts',
      'webhook-platform-web': 'src/webhook/platform/web.ts',
    },
    format: ['esm', 'cjs'],
    // Shared chunks in CJS too: otherwise each entry carries its own copy of the error classes, and
    // `require('eventwire/webhook').ValidationError` is not the class `require('eventwire')` throws.
    splitting: true,
    // Types for what users import; the platform modules are reached through the classes only.
    dts: {
      entry: {
        index: 'src/index.ts',
        webhook: 'src/webhook/index.ts',
        'webhook-node-only': 'src/webhook/node-only.ts',
        'webhook-bullmq': 'src/webhook/bullmq/index.ts',
        'webhook-otel': 'src/webhook/otel/index.ts',
        'disk-queue': 'src/client/disk-queue/index.ts',
      },
    },
    // The CLI build below writes cli.js beside these; both builds run at once.
    clean: ['!cli.js', '!cli.js.map'],
    sourcemap: true,
    target: 'es2022',
    platform: 'neutral',
    // ky is ESM only: bundled, so that `require('eventwire')` works on every Node that engines
    // admits (require(esm) is missing or differs before Node 20.19/22.12) and there is one copy of
    // it in both formats.
    noExternal: ['ky'],
    // The platform imports stay as written, for the runtime's (or the user's bundler's) export
    // conditions to resolve: one Client and one WebhookDestination, with the transport and signer of
    // wherever they run. The BullMQ peers stay imports: edge builds never see them. undici is no
    // dependency; it is listed so that a stray import of it fails loudly rather than being bundled.
    // @opentelemetry/api stays an import of `eventwire/webhook/otel` alone: the user's one copy
    // holds the global meter provider, and no other entry imports it.
    external: [
      '#eventwire/client-transport',
      '#eventwire/webhook-platform',
      'undici',
      'bullmq',
      'ioredis',
      '@opentelemetry/api',
    ],
  },
  {
    // The `eventwire` command: Node only, ESM only, one file (it shares no state with the library).
    entry: { cli: 'src/cli/bin.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    // Keep `node:` on built-in imports (tsup strips it by default): Node >= 20 needs no help, and
    // a reader of dist/cli.js sees at a glance that it imports nothing but Node and ky.
    removeNodeProtocol: false,
    // `destinations` and `dead-letters` load the BullMQ entry by the package's own name, when run:
    // the other commands start without the optional peers bullmq and ioredis.
    external: ['eventwire'],
  },
])
