// The CommonJS twin of entry-process.mjs: the package loaded with require(), as a CommonJS
// project loads it, then the very same conformance cases (loaded with import(), which CommonJS
// can always do).
const client = require('eventwire')
const webhook = require('eventwire/webhook')
const diskQueue = require('eventwire/disk-queue')

const node = !globalThis.Bun
const nodeOnly = node ? { ...require('eventwire/webhook/node'), ...require('eventwire/webhook/bullmq') } : {}
/** Node: a full garbage collection, without starting the process with --expose-gc. */
function garbageCollector() {
  require('node:v8').setFlagsFromString('--expose-gc')
  return require('node:vm').runInNewContext('gc')
}
const collectGarbage = node ? garbageCollector() : undefined
import('./conformance.mjs')
  .then(({ runInProcess }) =>
    runInProcess({ ...client, ...webhook, ...diskQueue, ...nodeOnly }, process.argv.slice(2), node, collectGarbage),
  )
  .then((results) => {
    console.log(JSON.stringify(results))
    process.exit(0)
  })
  .catch((error) => {
    console.error(error)
    process.exit(1)
  })
