// Cloudflare workerd runs this bundle: the conformance cases inside a fetch handler.
import * as client from 'eventwire'
import * as webhook from 'eventwire/webhook'
import { runConformance } from './conformance.mjs'

export default {
  async fetch(request) {
    const params = new URL(request.url).searchParams
    const run = params.get('run')
    const results = await runConformance(
      {
        api: { ...client, ...webhook },
        base: params.get('base'),
        run,
        vectors: JSON.parse(params.get('vectors')),
        writeKey: `key-${run}`,
      },
      { server: false },
    )
    return new Response(JSON.stringify(results), { headers: { 'content-type': 'application/json' } })
  },
}
