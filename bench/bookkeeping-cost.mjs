// Redis CPU per delivered event of each piece of a worker's bookkeeping, on a quiet redis-server of
// its own (AOF on, fsync every second), fed by this one process. Not part of `npm run bench`.
//
//   npx tsx bench/bookkeeping-cost.mjs [--events 100000] [--batch 20]
//
// It runs the workers' own scripts from the sources, as a worker sends them, `--batch` events a
// call (what one turn of a busy worker's event loop gathers), and reads Redis's used_cpu_user and
// used_cpu_sys around each part:
// - empty: a script that does nothing, called with the same arguments as the remembered ids;
// - taken: the report of taken events, when each moves one parked event of its destination up
//   (every event of one destination's backlog, all but the window parked: the most it costs);
// - remembered: the delivered ids, remembered for the default window;
// - log, one field: attempt-log entries as workers write them, 100 a call;
// - log, eight fields: the same entries, a field each, as earlier builds wrote them.
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { FAIR_WINDOW, FairQueueing } from '../src/webhook/bullmq/fair-queueing.ts'
import { REMEMBER_IDS_LUA, shardHash } from '../src/webhook/bullmq/remembered-ids.ts'
import { streamWriteLua } from '../src/webhook/bullmq/stream-writer.ts'
import { startRedisServer } from './redis-server.mjs'

const { values } = parseArgs({
  options: { events: { type: 'string', default: '100000' }, batch: { type: 'string', default: '20' } },
})
const events = Number(values.events)
const batch = Number(values.batch)
const server = await startRedisServer({ args: ['--appendonly', 'yes', '--appendfsync', 'everysec'] })
const redis = new Redis({ host: '127.0.0.1', port: server.port })
const base = 'bull:q'
const ids = Array.from(
  { length: events },
  (_, index) => `evt-2b5c1c9e-8a7d-4a55-9d1e-${String(index).padStart(12, '0')}`,
)
const entry = (id) => [Date.now(), id, 'http://127.0.0.1:34567/in', 1, 200, '', '', 1.3]

redis.defineCommand('empty', { numberOfKeys: 1, lua: 'return 1' })
redis.defineCommand('remember', { numberOfKeys: 1, lua: REMEMBER_IDS_LUA })
redis.defineCommand('logPacked', { lua: streamWriteLua(['a']) })
redis.defineCommand('logFields', { lua: streamWriteLua(['t', 'e', 'u', 'n', 's', 'c', 'x', 'd']) })
// Defines the report's script on the connection, as a worker does.
new FairQueueing(
  redis,
  { base, wait: `${base}:wait`, marker: `${base}:marker`, meta: `${base}:meta`, active: `${base}:active` },
  (error) => {
    throw error
  },
)

const redisCpu = async () => {
  const info = await redis.info('cpu')
  return Number(/used_cpu_user:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)[1])
}

/** Sends `call(from, to)` for each slice of `size` ids, at most 50 calls outstanding; Redis CPU per id, in µs. */
async function perId(size, call) {
  const before = await redisCpu()
  const outstanding = []
  for (let from = 0; from < events; from += size) {
    outstanding.push(call(from, Math.min(from + size, events)))
    if (outstanding.length >= 50) await Promise.all(outstanding.splice(0))
  }
  await Promise.all(outstanding)
  return (((await redisCpu()) - before) * 1e6) / events
}

const rememberArgs = (from, to) => ids.slice(from, to).flatMap((id) => [id, shardHash(id)])
const result = {}
await redis.flushall()
result.empty = await perId(batch, (from, to) =>
  redis.empty(`${base}:seen-windows`, `${base}:seen`, 86_400_000, ...rememberArgs(from, to)),
)

// Every event's job, the window admitted and the rest parked, as the store script leaves a backlog.
await redis.flushall()
const all = ids.map((id) => `dst-x/${id}`)
const extra = Array.from({ length: FAIR_WINDOW }, (_, index) => `dst-x/extra-${index}`)
for (let from = 0; from < all.length + extra.length; from += 1_000) {
  const pipeline = redis.pipeline()
  for (const id of [...all, ...extra].slice(from, from + 1_000)) pipeline.hset(`${base}:${id}`, 'data', '{}')
  await pipeline.exec()
}
await redis.sadd(`${base}:fair:x`, ...all.slice(0, FAIR_WINDOW))
const parked = [...all.slice(FAIR_WINDOW), ...extra]
for (let from = 0; from < parked.length; from += 1_000)
  await redis.rpush(`${base}:parked:x`, ...parked.slice(from, from + 1_000))
await redis.sadd(`${base}:fair-parties`, 'x')
await redis.set(`${base}:parked-count`, parked.length)
result.taken = await perId(batch, (from, to) =>
  redis.eventwireTaken(
    `${base}:wait`,
    `${base}:marker`,
    `${base}:meta`,
    `${base}:active`,
    base,
    String(FAIR_WINDOW),
    ...all.slice(from, to).flatMap((id) => [id, 'x']),
  ),
)
if ((await redis.llen(`${base}:wait`)) !== events)
  throw new Error('the report did not move up one parked event for each taken')

await redis.flushall()
result.remembered = await perId(batch, (from, to) =>
  redis.remember(`${base}:seen-windows`, `${base}:seen`, 86_400_000, ...rememberArgs(from, to)),
)
for (const [name, command, pack] of [
  ['logOneField', 'logPacked', (values) => [JSON.stringify(values)]],
  ['logEightFields', 'logFields', (values) => values],
]) {
  await redis.flushall()
  result[name] = await perId(100, (from, to) =>
    redis[command](
      1,
      `${base}:attempts`,
      200,
      604_800_000,
      to - from,
      ...ids.slice(from, to).flatMap((id) => pack(entry(id))),
    ),
  )
}
for (const [name, micros] of Object.entries(result)) result[name] = Math.round(micros * 100) / 100
console.log(JSON.stringify({ events, batch, microsPerEvent: result }))
redis.disconnect()
await server.stop()
