// `eventwire serve` takes what real clients send, and each event arrives verified at `eventwire
// listen`: @segment/analytics-node and @rudderstack/rudder-sdk-node (from npm, as a user would
// point them at it; Rudder's gzips its bodies), and requests shaped byte for byte as the Go
// clients send them. Each source has its own destination, a path of the one listen process.
import { request as httpRequest } from 'node:http'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Analytics } from '@segment/analytics-node'
import RudderAnalytics from '@rudderstack/rudder-sdk-node'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { plainEnv, startCli, startListen, type CliProcess } from '../helpers/cli.js'
import { redisForFile } from '../helpers/redis-suite.js'

const redis = redisForFile()
const running: CliProcess[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => (cli.child.exitCode === null ? cli.stop('SIGKILL') : undefined)))
})

const SECRET = 'clients-s3cret-5e6f'
const KEYS = { segment: 'wk_segment_1a', rudder: 'wk_rudder_2b', go2: 'wk_go2_3c', go3: 'wk_go3_4d' } as const
type Source = keyof typeof KEYS

/** What listen printed of one verified request. */
interface Received {
  path: string
  signature: string
  webhookId?: string
  payload: Record<string, unknown>
}

/**
 * The Go clients' requests, as their source writes them (github.com/segmentio/analytics-go). Both
 * POST the JSON of a batch to `/v1/batch` with `User-Agent: analytics-go (version: <v>)`,
 * `Content-Type: application/json` and the write key as the Basic user with an empty password, never
 * gzipped; Go's transport adds `Host`, `Content-Length` and `Accept-Encoding: gzip`.
 * - v2 (analytics.go, `Batch` and the message structs): `context` (the library) first, then
 *   `batch`, then the batch's `messageId` and `sentAt`; each message its own fields, then `type`,
 *   `messageId` and `timestamp`; times formatted `%Y-%m-%dT%H:%M:%S%z` (`+0000`, no milliseconds);
 *   a page's properties under `properties`.
 * - v3 (analytics.go and message.go): `messageId`, `sentAt`, `batch`, `context`; each message
 *   `type`, `messageId`, ids, fields, `timestamp` in RFC 3339 with nanoseconds dropped to what Go
 *   prints (`2009-11-10T23:00:00Z`); its fixtures name the library version 3.0.0.
 */
const GO = {
  go2: {
    userAgent: 'analytics-go (version: 2.1.1)',
    body: [
      '{"context":{"library":{"name":"analytics-go","version":"2.1.1"}},"batch":[',
      '{"properties":{"plan":"pro"},"userId":"go2-user","event":"Go Two Track","type":"track","messageId":"go2-m1","timestamp":"2009-11-10T23:00:00+0000"},',
      '{"traits":{"email":"a@example.com"},"userId":"go2-user","type":"identify","messageId":"go2-m2","timestamp":"2009-11-10T23:00:01+0000"},',
      '{"properties":{"path":"/"},"userId":"go2-user","name":"Home","type":"page","messageId":"go2-m3","timestamp":"2009-11-10T23:00:02+0000"}',
      '],"messageId":"go2-batch-1","sentAt":"2009-11-10T23:00:03+0000"}',
    ].join(''),
  },
  go3: {
    userAgent: 'analytics-go (version: 3.0.0)',
    body: [
      '{"messageId":"go3-batch-1","sentAt":"2009-11-10T23:00:00Z","batch":[',
      '{"type":"track","messageId":"go3-m1","userId":"go3-user","event":"Download","timestamp":"2009-11-10T23:00:00Z","properties":{"application":"Segment Desktop","platform":"osx","version":"1.1.0"}},',
      '{"type":"group","messageId":"go3-m2","userId":"go3-user","groupId":"g1","timestamp":"2009-11-10T23:00:00Z","traits":{"plan":"team"}},',
      '{"type":"alias","messageId":"go3-m3","previousId":"anon-9","userId":"go3-user","timestamp":"2009-11-10T23:00:00Z"}',
      '],"context":{"library":{"name":"analytics-go","version":"3.0.0"}}}',
    ].join(''),
  },
} as const

/** Sends a Go client's request as its bytes, with Go's headers in Go's order. */
function sendAsGo(url: string, source: 'go2' | 'go3'): Promise<{ status: number; body: string }> {
  const { userAgent, body } = GO[source]
  const target = new URL('/v1/batch', url)
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      target,
      {
        method: 'POST',
        // Node writes these in this order; Go writes Host first, then User-Agent, Content-Length, the rest sorted.
        headers: [
          'Host',
          target.host,
          'User-Agent',
          userAgent,
          'Content-Length',
          String(Buffer.byteLength(body)),
          'Authorization',
          `Basic ${Buffer.from(`${KEYS[source]}:`).toString('base64')}`,
          'Content-Type',
          'application/json',
          'Accept-Encoding',
          'gzip',
        ],
        setHost: false,
      },
      (response) => {
        let text = ''
        response.on('data', (chunk: Buffer) => (text += chunk.toString()))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }))
      },
    )
    sent.on('error', reject)
    sent.end(body)
  })
}

describe.runIf(redis.available)('eventwire serve with real clients', () => {
  it('takes what @segment/analytics-node, @rudderstack/rudder-sdk-node and the Go clients send; each event arrives verified', {
    timeout: 60_000,
  }, async () => {
    const { cli: listen, url: listenUrl } = await startListen(['--secret', SECRET])
    running.push(listen)
    const config = join(mkdtempSync(join(tmpdir(), 'eventwire-serve-clients-')), 'platform.json')
    const sources = Object.keys(KEYS) as Source[]
    writeFileSync(
      config,
      JSON.stringify({
        sources: sources.map((id) => ({ id, writeKey: KEYS[id], destinations: [id] })),
        destinations: sources.map((id) => ({ id, webhooks: [{ url: `${listenUrl}/${id}` }], sharedSecret: SECRET })),
      }),
    )
    const serve = await startCli(
      ['serve', '--config', config, '--port', '0', '--name', 'clients'],
      plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}` }),
    )
    running.push(serve)
    const url = String((await serve.waitForRecord((record) => record['event'] === 'listening', 20_000))['url'])

    // Segment's Node client, as its README sets it up, with the host pointed at serve.
    const segment = new Analytics({ writeKey: KEYS.segment, host: url, flushAt: 3 })
    const segmentErrors: unknown[] = []
    segment.on('error', (error) => segmentErrors.push(error))
    segment.track({ userId: 'seg-user', event: 'Segment Track', properties: { total: 42 } })
    segment.identify({ userId: 'seg-user', traits: { plan: 'pro' } })
    segment.page({ userId: 'seg-user', name: 'Pricing', properties: { path: '/pricing' } })
    segment.screen({ userId: 'seg-user', name: 'Home' })
    segment.group({ userId: 'seg-user', groupId: 'g7', traits: { seats: 5 } })
    segment.alias({ userId: 'seg-user', previousId: 'anon-1' })
    await segment.closeAndFlush()
    expect(segmentErrors).toEqual([])

    // RudderStack's Node client: gzip on by default.
    const rudderErrors: unknown[] = []
    const rudder = new RudderAnalytics(KEYS.rudder, {
      dataPlaneUrl: url,
      flushAt: 2,
      logLevel: 'error',
      errorHandler: (error?: unknown) => rudderErrors.push(error),
    })
    rudder.track({ userId: 'rud-user', event: 'Rudder Track', properties: { total: 7 } })
    rudder.identify({ userId: 'rud-user', traits: { plan: 'free' } })
    rudder.screen({ userId: 'rud-user', name: 'Settings' })
    await rudder.flush()
    expect(rudderErrors).toEqual([])

    for (const source of ['go2', 'go3'] as const) {
      const answer = await sendAsGo(url, source)
      expect(answer, source).toEqual({ status: 200, body: '{"success":true}' })
    }

    const expected: Record<Source, number> = { segment: 6, rudder: 3, go2: 3, go3: 3 }
    const total = Object.values(expected).reduce((sum, count) => sum + count, 0)
    const received = () => listen.records().filter((record) => record['event'] === 'request') as unknown as Received[]
    await vi.waitFor(() => expect(received().length).toBeGreaterThanOrEqual(total), { timeout: 30_000 })
    const requests = received()
    expect(requests).toHaveLength(total)
    expect(requests.every((request) => request.signature === 'verified')).toBe(true)
    const of = (source: Source) => requests.filter((request) => request.path === `/${source}`)
    for (const source of sources) expect(of(source), source).toHaveLength(expected[source])

    const byType = (source: Source) =>
      Object.fromEntries(of(source).map((request) => [request.payload['type'], request.payload]))
    expect(Object.keys(byType('segment')).sort()).toEqual(['alias', 'group', 'identify', 'page', 'screen', 'track'])
    expect(byType('segment')['track']).toMatchObject({
      userId: 'seg-user',
      event: 'Segment Track',
      properties: { total: 42 },
    })
    expect(byType('segment')['group']).toMatchObject({ groupId: 'g7', traits: { seats: 5 } })
    expect(byType('segment')['alias']).toMatchObject({ 'Previous ID': 'anon-1', 'User ID': 'seg-user' })
    expect(byType('rudder')['track']).toMatchObject({ userId: 'rud-user', event: 'Rudder Track' })
    expect(byType('rudder')['screen']).toMatchObject({ name: 'Settings' })
    // The Go clients' events: each messageId the Webhook-Id, each time as sent.
    expect(Object.fromEntries(of('go2').map((request) => [request.webhookId, request.payload['type']]))).toEqual({
      'go2-m1': 'track',
      'go2-m2': 'identify',
      'go2-m3': 'page',
    })
    expect(byType('go2')['track']).toMatchObject({
      event: 'Go Two Track',
      properties: { plan: 'pro' },
      timestamp: '2009-11-10T23:00:00.000Z',
    })
    expect(byType('go2')['page']).toMatchObject({ properties: { path: '/' } })
    expect(Object.fromEntries(of('go3').map((request) => [request.webhookId, request.payload['type']]))).toEqual({
      'go3-m1': 'track',
      'go3-m2': 'group',
      'go3-m3': 'alias',
    })
    expect(byType('go3')['track']).toMatchObject({
      event: 'Download',
      properties: { application: 'Segment Desktop', platform: 'osx', version: '1.1.0' },
    })
    expect(serve.records().filter((record) => record['event'] === 'refused')).toEqual([])
  })
})
