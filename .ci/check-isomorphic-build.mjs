// Fails when the builds meant for browsers, Deno, Bun and Workers (dist/index.*, dist/webhook.*)
// load a Node-only module, directly or through the chunks they import.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

const NODE_ONLY = /^(undici|bullmq|ioredis|node:.*)$/
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\(\s*)["']([^"']+)["']/g

function offenders(file, seen = new Set()) {
  if (seen.has(file)) return []
  seen.add(file)
  const found = []
  for (const [, specifier] of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
    if (NODE_ONLY.test(specifier)) found.push(`${file} imports ${specifier}`)
    else if (specifier.startsWith('./')) found.push(...offenders(join(dirname(file), specifier), seen))
  }
  return found
}

const found = ['dist/index.js', 'dist/index.cjs', 'dist/webhook.js', 'dist/webhook.cjs'].flatMap((file) =>
  offenders(file),
)
const probe = offenders('dist/webhook-node.js')
if (probe.length === 0) {
  console.error('check-isomorphic-build: found no undici import in dist/webhook-node.js either; the check is blind')
  process.exit(1)
}
if (found.length > 0) {
  console.error(`isomorphic builds load Node-only modules:\n${found.join('\n')}`)
  process.exit(1)
}
console.log('isomorphic builds load no Node-only module')
