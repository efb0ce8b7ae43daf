// The meter behind `eventwire serve --metrics-port`: the OpenTelemetry instruments the library makes
// (counters, histograms with their advised buckets, observable gauges by batch and single
// callbacks), written in the Prometheus text format; names and labels spelled as Prometheus wants,
// label values escaped, observed series only as the last scrape saw them, a failing callback
// costing only its own series. And the library's own instruments made on it, from a real delivery.
import { afterEach, describe, expect, it } from 'vitest'
import { prometheusName, PrometheusMeter } from '../../src/cli/serve/prometheus-meter.js'
import { WebhookDestination } from '../../src/webhook/index.js'
import { instrumentWebhooks } from '../../src/webhook/otel/index.js'
import { startSink, type Sink } from '../helpers/sink.js'

const open: Sink[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((sink) => sink.close()))
})

describe('PrometheusMeter', () => {
  it('spells names as Prometheus does: underscores, seconds, _total for counters', () => {
    expect(prometheusName('eventwire.webhook.deliveries', '{event}', 'counter')).toBe(
      'eventwire_webhook_deliveries_total',
    )
    expect(prometheusName('http.client.request.duration', 's', 'histogram')).toBe(
      'http_client_request_duration_seconds',
    )
    expect(prometheusName('x.lateness_seconds', 's', 'gauge')).toBe('x_lateness_seconds')
    expect(prometheusName('queue.depth', '{delivery}', 'gauge')).toBe('queue_depth')
    expect(prometheusName('a-b c', undefined, 'gauge')).toBe('a_b_c')
  })

  it('writes counters, up-down counters and gauges by their labels, sorted and escaped', async () => {
    const provider = new PrometheusMeter()
    const requests = provider.getMeter().createCounter('serve.requests', { description: 'Requests.\nAll.' })
    requests.add(1, { status: 200, 'eventwire.source': 'shop' })
    requests.add(2, { 'eventwire.source': 'shop', status: 200 })
    requests.add(1, { status: 429, 'eventwire.source': 'say "hi"\\\n' })
    requests.add(Number.NaN, { status: 500 })
    requests.add(1, { status: 503, gone: undefined })
    const inFlight = provider.getMeter().createUpDownCounter('serve.in_flight')
    inFlight.add(3)
    inFlight.add(-1)
    const level = provider.getMeter().createGauge('serve.level')
    level.record(4)
    level.record(2)
    expect(await provider.text()).toBe(
      [
        '# HELP serve_requests_total Requests.\\nAll.',
        '# TYPE serve_requests_total counter',
        'serve_requests_total{eventwire_source="shop",status="200"} 3',
        'serve_requests_total{eventwire_source="say \\"hi\\"\\\\\\n",status="429"} 1',
        'serve_requests_total{status="503"} 1',
        '# HELP serve_in_flight serve.in_flight',
        '# TYPE serve_in_flight gauge',
        'serve_in_flight 2',
        '# HELP serve_level serve.level',
        '# TYPE serve_level gauge',
        'serve_level 2',
        '',
      ].join('\n'),
    )
  })

  it('writes histograms with their advised buckets, cumulative, with sum and count', async () => {
    const provider = new PrometheusMeter()
    const duration = provider.getMeter().createHistogram('request.duration', {
      unit: 's',
      advice: { explicitBucketBoundaries: [0.1, 1] },
    })
    for (const value of [0.05, 0.1, 0.5, 2]) duration.record(value, { url: 'a' })
    expect(await provider.text()).toBe(
      [
        '# HELP request_duration_seconds request.duration',
        '# TYPE request_duration_seconds histogram',
        'request_duration_seconds_bucket{url="a",le="0.1"} 2',
        'request_duration_seconds_bucket{url="a",le="1"} 3',
        'request_duration_seconds_bucket{url="a",le="+Inf"} 4',
        'request_duration_seconds_sum{url="a"} 2.65',
        'request_duration_seconds_count{url="a"} 4',
        '',
      ].join('\n'),
    )
    const bare = new PrometheusMeter()
    bare.getMeter().createHistogram('h').record(3)
    expect(await bare.text()).toContain('h_bucket{le="+Inf"} 1\nh_sum 3\nh_count 1')
  })

  it('writes observed gauges as the last scrape saw them; a failing callback costs only its own', async () => {
    const provider = new PrometheusMeter()
    const meter = provider.getMeter()
    const depth = meter.createObservableGauge('queue.depth')
    const held = meter.createObservableGauge('queue.held')
    const broken = meter.createObservableGauge('broken')
    const seen = meter.createObservableCounter('seen')
    let urls = ['a', 'b']
    const batch = (result: { observe(gauge: unknown, value: number, attributes?: Record<string, unknown>): void }) => {
      result.observe(depth, 5)
      for (const url of urls) result.observe(held, 1, { url })
    }
    meter.addBatchObservableCallback(batch, [depth, held])
    broken.addCallback(() => {
      throw new Error('no Redis')
    })
    const counted = (result: { observe(value: number): void }) => result.observe(7)
    seen.addCallback(counted)
    const first = await provider.text()
    expect(first).toContain('queue_depth 5\n')
    expect(first).toContain('queue_held{url="a"} 1\nqueue_held{url="b"} 1\n')
    expect(first).toContain('seen_total 7\n')
    expect(first).not.toContain('broken')
    urls = ['b']
    const second = await provider.text()
    expect(second).not.toContain('url="a"')
    expect(second).toContain('queue_held{url="b"} 1\n')
    meter.removeBatchObservableCallback(batch, [depth, held])
    seen.removeCallback(counted)
    expect(await provider.text()).toBe('\n')
  })

  it("carries the library's own instruments: a delivery counted by destination, URL and outcome", async () => {
    const sink = await startSink()
    open.push(sink)
    const provider = new PrometheusMeter()
    const destination = new WebhookDestination({ webhooks: [{ url: sink.url }] })
    const instrumentation = instrumentWebhooks(destination, { meterProvider: provider })
    await destination.deliver({ type: 'track', userId: 'u1', event: 'Paid' })
    const text = await provider.text()
    instrumentation.stop()
    await destination.close()
    expect(text).toMatch(/^# TYPE eventwire_webhook_deliveries_total counter$/m)
    expect(text).toMatch(/^eventwire_webhook_deliveries_total\{.*outcome="delivered".*\} 1$/m)
    expect(text).toMatch(/^# TYPE http_client_request_duration_seconds histogram$/m)
    expect(text).toMatch(/^http_client_request_duration_seconds_count\{.*http_response_status_code="200".*\} 1$/m)
  })
})
