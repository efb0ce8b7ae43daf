// The sending process of bench/disk-queue-crash.mjs: a DurableClient on DIRECTORY sending to
// ENDPOINT. It prints `ready <recovery JSON>` once the client started, then sends COUNT track calls
// with messageIds `<RUN>-<n>`, in bursts, and prints each id on its own line once its call has
// returned: a line on stdout means the call accepted the message (a write to a pipe, done before
// the next call). Then `flushed` once everything queued was settled. The harness kills it with
// SIGKILL at a moment of its choosing; it never exits on its own.
import { writeSync } from 'node:fs'
import { setImmediate } from 'node:timers/promises'

const { DurableClient } = await import(process.env.EVENTWIRE_DISK_QUEUE ?? 'eventwire/disk-queue')
const count = Number(process.env.COUNT)
const run = process.env.RUN
const client = new DurableClient('crash-key', {
  endpoint: process.env.ENDPOINT,
  flushAt: 20,
  flushAfter: 5,
  retry: { limit: 1000, baseDelay: 5, maxDelay: 50 },
  logger: { log: () => undefined, error: (line) => writeSync(2, `${line}\n`) },
  disk: { directory: process.env.DIRECTORY, segmentBytes: Number(process.env.SEGMENT_BYTES ?? 16384) },
})
client.on('error', (error) => writeSync(2, `${error.code}: ${error.message}\n`))
writeSync(1, `ready ${JSON.stringify(client.recovery)}\n`)
let burst = 1 + Math.floor(Math.random() * 40)
for (let index = 0; index < count; index++) {
  const messageId = `${run}-${index}`
  client.track({ userId: `user-${index % 7}`, event: 'Crash Test', messageId, properties: { index, run } })
  writeSync(1, `${messageId}\n`)
  if (--burst === 0) {
    burst = 1 + Math.floor(Math.random() * 40)
    await setImmediate()
  }
}
await client.flush()
writeSync(1, 'flushed\n')
// Held open until killed: the harness decides when it ends.
setInterval(() => undefined, 1 << 30)
