// Fails when the builds meant for browsers, Deno, Bun and Workers (dist/index.*, dist/webhook.*, dist/webhook-otel.*)
// load a Node-only module, directly, through the chunks they import, or through a platform import
// (`#eventwire/client-transport`, `#eventwire/webhook-platform`) as package.json "imports" resolves it for those
// runtimes (the "default" and "browser" conditions). Resolved under "node", the same walk must find what the Node
// platform sends with (node:net, for the client and for webhooks).
import { readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join } from 'node:path'

// Node's own modules with or without `node:` (tsup writes `node:net` as `net`), and the Node-only packages.
const NODE_BUILTINS = new Set(builtinModules)
const isNodeOnly = (specifier) =>
  /^(undici|bullmq|ioredis|node:.*)$/.test(specifier) || NODE_BUILTINS.has(specifier.split('/')[0])
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\(\s*)["']([^"']+)["']/g
const { imports } = JSON.parse(readFileSync('package.json', 'utf8'))

function offenders(file, condition, seen = new Set()) {
  if (seen.has(file)) return []
  seen.add(file)
  const found = []
  for (const [, specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
    if (isNodeOnly(specifier)) found.push(`${file} imports ${specifier}`)
    else if (specifier.startsWith('./')) found.push(...offenders(join(dirname(file), specifier), condition, seen))
    else if (specifier.startsWith('#')) {
      const target = imports[specifier]?.[condition]?.[file.endsWith('.cjs') ? 'require' : 'import']
      if (!target) found.push(`${file} imports ${specifier}, which package.json "imports" does not resolve`)
      else found.push(...offenders(target, condition, seen))
    }
  }
  return found
}

const ISOMORPHIC = ['dist/index.js', 'dist/index.cjs', 'dist/webhook.js', 'dist/webhook.cjs']
const found = ISOMORPHIC.flatMap((file) => [...offenders(file, 'default'), ...offenders(file, 'browser')])
for (const file of ISOMORPHIC) {
  if (!offenders(file, 'node').some((line) => / imports (node:)?net$/.test(line))) {
    console.error(`check-isomorphic-build: found no node:net import below ${file} under "node"; the check is blind`)
    process.exit(1)
  }
}
// The metrics entry loads nothing of Node under any condition: it runs beside the in-memory engine
// everywhere, with nothing but @opentelemetry/api.
const NODE_FREE = ['dist/webhook-otel.js', 'dist/webhook-otel.cjs']
found.push(
  ...NODE_FREE.flatMap((file) => ['default', 'browser', 'node'].flatMap((condition) => offenders(file, condition))),
)
if (found.length > 0) {
  console.error(`isomorphic builds load Node-only modules:\n${found.join('\n')}`)
  process.exit(1)
}
console.log('isomorphic builds load no Node-only module')
