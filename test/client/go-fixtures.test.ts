import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { MessageByType, MessageType } from '../../src/index.js'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import { ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'

const { captured } = useBatchEndpoint()
/** Copied from the Go client's repository; NOTICE.md there gives the source and the licence. */
const FIXTURES = fileURLToPath(new URL('../fixtures/analytics-go-v3/', import.meta.url))

/** Re-prints JSON the way the fixtures are: keys sorted, two-space indent. */
function normalize(value: unknown): string {
  const sort = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(sort)
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(
        Object.keys(node)
          .sort()
          .map((key) => [key, sort((node as Record<string, unknown>)[key])]),
      )
    }
    return node
  }
  return JSON.stringify(sort(value), null, 2)
}

/** What the Go tests enqueue for each fixture (analytics-go v3's analytics_test.go). */
const FIXED = { messageId: "I'm unique", timestamp: '2009-11-10T23:00:00Z' }
const DOWNLOAD = {
  event: 'Download',
  userId: '123456',
  properties: { application: 'Segment Desktop', version: '1.1.0', platform: 'osx' },
}
const CALLS: Record<string, Array<{ [Type in MessageType]: [Type, MessageByType[Type]] }[MessageType]>> = {
  'test-enqueue-alias.json': [['alias', { ...FIXED, previousId: 'A', userId: 'B' }]],
  'test-enqueue-group.json': [['group', { ...FIXED, groupId: 'A', userId: 'B' }]],
  'test-enqueue-identify.json': [['identify', { ...FIXED, userId: 'B' }]],
  'test-enqueue-page.json': [['page', { ...FIXED, name: 'A', userId: 'B' }]],
  'test-enqueue-screen.json': [['screen', { ...FIXED, name: 'A', userId: 'B' }]],
  'test-enqueue-track.json': [['track', { ...FIXED, ...DOWNLOAD }]],
  'test-interval-track.json': [['track', { ...FIXED, ...DOWNLOAD }]],
  'test-context-track.json': [['track', { ...FIXED, ...DOWNLOAD, context: { whatever: 'here' } }]],
  'test-integrations-track.json': [
    ['track', { ...FIXED, ...DOWNLOAD, integrations: { All: true, Intercom: false, Mixpanel: true } }],
  ],
  'test-messageid-track.json': [['track', { ...FIXED, ...DOWNLOAD, messageId: 'abc' }]],
  'test-timestamp-track.json': [['track', { ...FIXED, ...DOWNLOAD, timestamp: '2015-07-10T23:00:00Z' }]],
  'test-many-track.json': [0, 1, 2].map((version) => [
    'track',
    { ...FIXED, event: 'Download', userId: '123456', properties: { application: 'Segment Desktop', version } },
  ]),
}

describe("the Go client's own expected batch bodies", () => {
  it('covers every fixture file', () => {
    expect(
      readdirSync(FIXTURES)
        .filter((name) => name.endsWith('.json'))
        .sort(),
    ).toEqual(Object.keys(CALLS).sort())
  })

  it.each(Object.keys(CALLS))('%s: same body apart from library, batch messageId and sentAt', async (file) => {
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000 })
    for (const [type, message] of CALLS[file] ?? []) {
      ;(client[type] as (input: typeof message) => boolean)(message)
    }
    await client.flush()
    expect(captured).toHaveLength(1)
    const ours = captured[0]?.json as Record<string, unknown>
    const expected = JSON.parse(readFileSync(FIXTURES + file, 'utf8')) as Record<string, unknown>
    const envelope = { context: expected['context'], messageId: expected['messageId'], sentAt: expected['sentAt'] }
    expect(normalize({ ...ours, ...envelope })).toBe(normalize(expected))
  })
})
