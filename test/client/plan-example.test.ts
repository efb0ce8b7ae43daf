import { afterEach, describe, expect, it } from 'vitest'
// @ts-expect-error: the examples are plain JavaScript
import { run } from '../../examples/tracking-plan.mjs'
import { startSink, type Sink } from '../helpers/sink.js'

let sink: Sink | undefined
afterEach(async () => {
  await sink?.close()
  sink = undefined
})

describe('examples/tracking-plan.mjs', () => {
  it("sends what follows the plan with the schema's defaults, refuses what breaks it, and reports in 'report' mode", async () => {
    sink = await startSink()
    const printed: string[] = []
    await run(sink.url, (line: string) => printed.push(line))
    expect(printed).toEqual([
      'refused: ERR_PLAN_VIOLATION at properties.total',
      expect.stringMatching(/^violation: properties\.total \(.+\)$/),
    ])
    const sent = sink.requests.flatMap((request) => JSON.parse(request.body).batch)
    expect(sent.map((message: { type: string }) => message.type)).toEqual(['identify', 'track', 'track'])
    expect(sent[1].properties).toEqual({ orderId: 'o1', total: 42, currency: 'EUR' })
    expect(sent[2].properties).toEqual({ orderId: 'o3', total: -5 })
  })
})
