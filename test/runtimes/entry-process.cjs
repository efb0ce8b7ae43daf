// The CommonJS twin of entry-process.mjs: the package loaded with require(), as a CommonJS
// project loads it, then the very same conformance cases (loaded with import(), which CommonJS
// can always do).
const client = require('eventwire')
const webhook = require('eventwire/webhook')

const [base, run, vectors, redisPort] = process.argv.slice(2)
const node = !globalThis.Bun
const nodeOnly = node ? { ...require('eventwire/webhook/node'), ...require('eventwire/webhook/bullmq') } : {}
import('./conformance.mjs')
  .then(async ({ runConformance }) => {
    const results = await runConformance(
      {
        api: { ...client, ...webhook, ...nodeOnly },
        base,
        run,
        vectors: JSON.parse(vectors),
        writeKey: `key-${run}`,
        redisPort: Number(redisPort),
        node,
      },
      { server: true, node },
    )
    console.log(JSON.stringify(results))
    process.exit(0)
  })
  .catch((error) => {
    console.error(error)
    process.exit(1)
  })
