// Which code allocated what reached V8's old generation: the waiting-deliveries scenario of
// webhook-run.mjs (each delivery attempted once, then waiting an hour for its retry), under V8's
// sampling heap profiler. Objects a scavenge collected are left out; what remains is what is still
// alive (the waiting deliveries) plus the garbage that only a full GC collected. Prints peak RSS
// and the allocating stacks (three frames) by size. A diagnosis tool, not part of `npm run bench`.
//
//   node bench/receiver.mjs 500   # prints its port
//   node --expose-gc bench/old-garbage.mjs '{"url":"http://127.0.0.1:PORT/in","deliveries":100000}'
import { Session } from 'node:inspector/promises'
import { smallOrderEvent } from './typical-event.mjs'

const config = JSON.parse(process.argv[2])
const { WebhookDestination } = await import(process.env.EVENTWIRE_WEBHOOK_ENTRY ?? 'eventwire/webhook')
const event = smallOrderEvent

const session = new Session()
session.connect()
await session.post('HeapProfiler.enable')
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 1024,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: false,
})
const destination = new WebhookDestination({
  webhooks: [{ url: config.url }],
  sharedSecret: 's3cret',
  backoff: () => 3_600_000,
  breaker: false,
})
const deliveries = Array.from({ length: config.deliveries }, (_, index) => destination.deliver(event(index)))
while (destination.pendingRetries < config.deliveries) await new Promise((resolve) => setTimeout(resolve, 50))
globalThis.gc?.()
const { profile } = await session.post('HeapProfiler.stopSampling')

const bytesByStack = new Map()
const walk = (node, frames) => {
  const { functionName, url, lineNumber } = node.callFrame
  const here = [...frames, `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`]
  if (node.selfSize > 0) {
    const stack = here.slice(-3).join(' < ')
    bytesByStack.set(stack, (bytesByStack.get(stack) ?? 0) + node.selfSize)
  }
  for (const child of node.children) walk(child, here)
}
walk(profile.head, [])
console.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`)
for (const [stack, bytes] of [...bytesByStack].sort((a, b) => b[1] - a[1]).slice(0, config.top ?? 25)) {
  console.log(`${(bytes / 2 ** 20).toFixed(1).padStart(6)} MB  ${stack}`)
}
await destination.close({ timeout: 1_000 })
await Promise.all(deliveries)
process.exit(0)
