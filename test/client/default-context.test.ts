import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { OptionsError, ValidationError } from '../../src/index.js'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import { ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'

const { captured } = useBatchEndpoint()

const defaultContext = { app: { name: 'shop', version: '2.4.1' }, environment: 'production' }

/** The `"context":{...}` member of a batch body, as sent. */
const contextMember = (body: string) => /\],"context":(\{.*\}),"messageId":"[^"]*","sentAt"/.exec(body)?.[1]

describe('defaultContext', () => {
  it("goes into every batch's top-level context beside the client's library, the same bytes each time", async () => {
    const client = new Client('key', { endpoint: ENDPOINT, flushAt: 1, defaultContext })
    client.track({ userId: 'u1', event: 'A', context: { ip: '10.0.0.1' } })
    client.track({ userId: 'u2', event: 'B' })
    await client.close()
    expect(captured).toHaveLength(2)
    const first = captured[0]?.json
    expect(first?.context).toEqual({
      ...defaultContext,
      library: { name: 'eventwire', version: expect.any(String) },
    })
    // A message's own context stays its own.
    expect(first?.batch[0]?.['context']).toEqual({ ip: '10.0.0.1' })
    const members = captured.map((request) => contextMember(request.body))
    expect(members[0]).toBeDefined()
    expect(members[1]).toBe(members[0])
  })

  it('is copied at construction: changing the object later changes no batch', async () => {
    const mutable = { app: { version: '1' } }
    const client = new Client('key', { endpoint: ENDPOINT, flushAt: 1, defaultContext: mutable })
    mutable.app.version = '2'
    client.track({ userId: 'u1', event: 'A' })
    await client.close()
    expect(captured[0]?.json.context).toMatchObject({ app: { version: '1' } })
  })

  it('refuses library (the client cannot be named otherwise), values JSON cannot carry, non-plain objects, and over 16,000 bytes', () => {
    const attempt = (value: unknown) => () => new Client('key', { defaultContext: value as never })
    expect(attempt({ library: { name: 'other' } })).toThrow(/without `library` \(the client's own\)/)
    const bigint = attempt({ build: 1n })
    expect(bigint).toThrow(OptionsError)
    try {
      bigint()
    } catch (error) {
      expect((error as OptionsError).option).toBe('defaultContext')
      expect((error as Error).cause).toBeInstanceOf(ValidationError)
    }
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    expect(attempt(cyclic)).toThrow(OptionsError)
    expect(attempt({ at: () => 1 })).toThrow(OptionsError)
    expect(attempt([1])).toThrow(OptionsError)
    expect(attempt({ pad: 'x'.repeat(16_000) })).toThrow(/at most 16000 bytes as JSON/)
    expect(attempt({ pad: 'x'.repeat(15_000) })).not.toThrow()
    // Anything JSON would turn into something other than an object.
    for (const value of [new Date(), { toJSON: () => 'prod' }, { toJSON: () => ['a'] }, { toJSON: () => null }]) {
      expect(attempt(value)).toThrow(OptionsError)
    }
  })

  it('sends what the Go client v3 sends for the same DefaultContext (its fixture format, library aside)', async () => {
    // analytics-go v3 marshals Config.DefaultContext, with its library, as the batch's context:
    // the expected body is the Go fixture's, with that context.
    const fixture = JSON.parse(
      readFileSync(new URL('../fixtures/analytics-go-v3/test-context-track.json', import.meta.url), 'utf8'),
    ) as Record<string, Record<string, unknown>>
    const goContext = { app: { name: 'Segment Desktop', version: '1.1.0' }, locale: 'en-US', ...fixture['context'] }
    const client = new Client('key', {
      endpoint: ENDPOINT,
      flushAfter: 60_000,
      defaultContext: { app: { name: 'Segment Desktop', version: '1.1.0' }, locale: 'en-US' },
    })
    client.track({
      messageId: "I'm unique",
      timestamp: '2009-11-10T23:00:00Z',
      event: 'Download',
      userId: '123456',
      properties: { application: 'Segment Desktop', version: '1.1.0', platform: 'osx' },
      context: { whatever: 'here' },
    })
    await client.flush()
    const ours = captured[0]?.json as Record<string, unknown>
    const expected: Record<string, unknown> = { ...fixture, context: goContext }
    // The library is each client's own; the batch id and time are each batch's.
    const sameEnvelope = {
      messageId: expected['messageId'],
      sentAt: expected['sentAt'],
      context: { ...(ours['context'] as object), library: fixture['context']?.['library'] },
    }
    expect({ ...ours, ...sameEnvelope }).toEqual(expected)
  })
})
