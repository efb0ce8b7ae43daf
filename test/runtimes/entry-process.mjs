// Node, Bun and Deno run this from the scratch project that installed the packed tarball:
// `eventwire`, `eventwire/webhook` and `eventwire/disk-queue` resolve the way they do for users of that runtime. Node
// also loads `eventwire/webhook/node` and `eventwire/webhook/bullmq` and runs the cases that use them.
import * as client from 'eventwire'
import * as webhook from 'eventwire/webhook'
// The client with its queue on disk: every server runtime, never a browser or a Worker.
import * as diskQueue from 'eventwire/disk-queue'
import { runInProcess } from './conformance.mjs'

const node = !globalThis.Deno && !globalThis.Bun
const nodeOnly = node
  ? { ...(await import('eventwire/webhook/node')), ...(await import('eventwire/webhook/bullmq')) }
  : {}
/** Node: a full garbage collection, without starting the process with --expose-gc. */
async function garbageCollector() {
  const { setFlagsFromString } = await import('node:v8')
  const { runInNewContext } = await import('node:vm')
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc')
}
const collectGarbage = node ? await garbageCollector() : undefined
const args = globalThis.Deno?.args ?? globalThis.process.argv.slice(2)
console.log(
  JSON.stringify(await runInProcess({ ...client, ...webhook, ...diskQueue, ...nodeOnly }, args, node, collectGarbage)),
)
if (globalThis.Deno) globalThis.Deno.exit(0)
else globalThis.process.exit(0)
