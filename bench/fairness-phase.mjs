// What the fairness benches share: one phase of `small`'s steady stream, and its latencies as the
// receiver of fairness-run.mjs noted them.

export const epochMs = () => performance.timeOrigin + performance.now()
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
export const log = (line) => process.stderr.write(`${line}\n`)
export const round = (value, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits
export const event = (id, properties) => ({
  type: 'track',
  userId: 'u1',
  event: 'Order Completed',
  messageId: id,
  properties,
})

/** The value at `share` (0.5, 0.99) of a sorted list. */
export function percentile(sorted, share) {
  if (sorted.length === 0) return undefined
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]
}

/**
 * Sends `small` `smallRate` events a second for `seconds` (`send(at)`, `at` the time it is
 * stamped with), with `during(until)` beside it, then `settle()`; returns `small`'s latency
 * percentiles (ms) and how many of `big`'s requests the receiver answered a second.
 */
export async function measurePhase({ name, seconds, smallRate, stats, send, during, settle }) {
  await stats('DELETE')
  const bigBefore = (await stats()).big
  const started = epochMs()
  const until = started + seconds * 1000
  const stream = async () => {
    const interval = 1000 / smallRate
    for (let next = epochMs(); next < until; next += interval) {
      await sleep(Math.max(0, next - epochMs()))
      await send(epochMs())
    }
  }
  await Promise.all([stream(), during?.(until)])
  await settle()
  const { big, latencies } = await stats()
  const sorted = latencies.sort((a, b) => a - b)
  const result = {
    small: sorted.length,
    p50: round(percentile(sorted, 0.5)),
    p95: round(percentile(sorted, 0.95)),
    p99: round(percentile(sorted, 0.99)),
    max: round(sorted.at(-1) ?? Number.NaN),
    bigPerSecond: Math.round((big - bigBefore) / ((epochMs() - started) / 1000)),
  }
  log(
    `${name}: small p50 ${result.p50} ms, p99 ${result.p99} ms (${result.small} events); big ${result.bigPerSecond}/s`,
  )
  return result
}

/** Calls `fill(count)` for `rate` events a second until `until`, 50 ms at a time: `big`'s load in the busy phase. */
export async function steadily(rate, until, fill) {
  const tick = 50
  const perTick = Math.max(1, Math.round((rate * tick) / 1000))
  for (let next = epochMs(); next < until; next += tick) {
    await sleep(Math.max(0, next - epochMs()))
    await fill(perTick)
  }
}

/** Prints the one JSON line on stdout: each phase, and the backlog's p99 over the busy and alone ones. */
export function report(config, { alone, busy, backlog }) {
  const output = {
    config,
    alone,
    busy,
    backlog,
    backlogOverBusy: round(backlog.p99 / busy.p99, 2),
    backlogOverAlone: round(backlog.p99 / alone.p99, 2),
  }
  console.log(JSON.stringify(output))
}
