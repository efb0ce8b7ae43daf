// Chromium runs this bundle in a page served by the sink (same origin, so no CORS).
import * as client from 'eventwire'
import * as webhook from 'eventwire/webhook'
import { runConformance } from './conformance.mjs'

const params = new URLSearchParams(location.search)
const run = params.get('run')
const results = await runConformance(
  {
    api: { ...client, ...webhook },
    base: location.origin,
    run,
    vectors: JSON.parse(params.get('vectors')),
    writeKey: `key-${run}`,
    browser: true,
  },
  { server: false },
)
// Left queued on purpose: the orchestrator navigates away and expects pagehide to send them.
const leaving = new client.Client(`key-${run}`, {
  endpoint: `${location.origin}/ingest/${run}-pagehide`,
  flushAfter: 600_000,
})
for (let index = 0; index < 30; index++) leaving.track({ userId: 'u1', event: 'Leaving', properties: { index } })
await fetch(`/results/${run}`, { method: 'POST', body: JSON.stringify(results) })
document.title = 'done'
