import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/index.js'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import { ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'

// Where the Go client (v2 and v3, run side by side with the same calls) and eventwire could
// differ on the wire, they must not, except where the README says why.
const { captured } = useBatchEndpoint()

async function sent(call: (client: Client) => void): Promise<Record<string, unknown>> {
  const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000 })
  call(client)
  await client.close()
  expect(captured).toHaveLength(1)
  return captured[0]?.json.batch[0] ?? {}
}

describe('the wire, beside the Go client', () => {
  it('omits an empty userId sent beside an anonymousId, as Go omits empty strings', async () => {
    const message = await sent((client) => client.track({ userId: '', anonymousId: 'a1', event: 'E' }))
    expect(message).not.toHaveProperty('userId')
    expect(message['anonymousId']).toBe('a1')
  })

  it("omits page and screen name: '' and category: ''", async () => {
    const page = await sent((client) => client.page({ userId: 'u1', name: '', category: '' }))
    expect(page).not.toHaveProperty('name')
    expect(page).not.toHaveProperty('category')
  })

  it.each(['properties', 'context', 'integrations'] as const)(
    'omits an empty %s object, as Go omits empty maps',
    async (field) => {
      const message = await sent((client) => client.track({ userId: 'u1', event: 'E', [field]: {} }))
      expect(message).not.toHaveProperty(field)
    },
  )

  it('omits empty traits, and an object whose only property is undefined (JSON writes it as {})', async () => {
    expect(await sent((client) => client.identify({ userId: 'u1', traits: {} }))).not.toHaveProperty('traits')
    captured.length = 0
    expect(
      await sent((client) => client.group({ userId: 'u1', groupId: 'g1', traits: { plan: undefined } })),
    ).not.toHaveProperty('traits')
  })

  it('keeps objects and strings that have something in them', async () => {
    const message = await sent((client) =>
      client.page({ userId: 'u1', name: 'Home', properties: { path: '/' }, context: { ip: '0.0.0.0' } }),
    )
    expect(message).toMatchObject({ name: 'Home', properties: { path: '/' }, context: { ip: '0.0.0.0' } })
  })

  it.each([
    '2024-05-06T10:00:00Z',
    '2024-05-06T10:00Z',
    '2024-05-06T12:00:00.123456+02:00',
    '2024-05-06T10:00:00-0700',
    '2024-02-29T23:59:59z',
    '2024-05-06T10:00:00+23:59',
    '2024-05-06T10:00:00-00:00',
    '2000-02-29T00:00:00Z',
    '2024-12-31T23:59:59Z',
    // ISO 8601 counts years on the Gregorian calendar extended backwards: year 0 was a leap year.
    '0000-02-29T00:00:00Z',
  ])('sends the ISO 8601 timestamp %s as given', async (timestamp) => {
    expect((await sent((client) => client.track({ userId: 'u1', event: 'E', timestamp })))['timestamp']).toBe(timestamp)
  })

  it.each([
    '1',
    'May 6, 2024',
    '2024-05-06',
    '2024-05-06T10:00:00',
    '2024-05-06 10:00:00Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-05-00T00:00:00Z',
    '2024-00-10T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-05-06T24:00:00Z',
    '2024-05-06T10:00:00+24:00',
    'x2024-05-06T10:00:00Z',
    '2024-05-06T10:00:00Z (UTC)',
  ])('refuses the timestamp %j, which is not an ISO 8601 date-time with a zone', (timestamp) => {
    const client = new Client('key', { endpoint: ENDPOINT, flushAfter: 60_000 })
    expect(() => client.track({ userId: 'u1', event: 'E', timestamp })).toThrow(ValidationError)
    expect(() => client.track({ userId: 'u1', event: 'E', timestamp })).toThrow(/ISO 8601 date-time with a time zone/)
    expect(client.pending).toBe(0)
  })
})
