// Node, Bun and Deno run this from the scratch project that installed the packed tarball:
// `eventwire` and `eventwire/webhook` resolve the way they do for users of that runtime.
import * as client from 'eventwire'
import * as webhook from 'eventwire/webhook'
import { runConformance } from './conformance.mjs'

const args = globalThis.Deno?.args ?? globalThis.process.argv.slice(2)
const [base, run, vectors] = args
const results = await runConformance(
  { api: { ...client, ...webhook }, base, run, vectors: JSON.parse(vectors), writeKey: `key-${run}` },
  { server: true },
)
console.log(JSON.stringify(results))
if (globalThis.Deno) globalThis.Deno.exit(0)
else globalThis.process.exit(0)
