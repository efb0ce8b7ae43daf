import { describe, expect, it } from 'vitest'
// msw intercepts fetch, not undici's Pool: this suite runs the Client with fetch (web platform).
import { WebClient as Client } from '../helpers/builds.js'
import { resolveClientOptions } from '../../src/client/options.js'
import { OptionsError } from '../../src/index.js'
import { ENDPOINT, useBatchEndpoint } from '../helpers/msw.js'

const { captured, respond } = useBatchEndpoint()

describe("writeKeyIn: 'body'", () => {
  it('puts the key in the batch envelope, sends plain text without Authorization, and counts the bytes it adds', async () => {
    // A key with multi-byte characters: its UTF-8 size, not its length, is what the body grows by.
    const writeKey = 'clé-😀'
    const client = new Client(writeKey, { endpoint: ENDPOINT, writeKeyIn: 'body' })
    const sizes: number[] = []
    client.on('sent', (info) => sizes.push(info.bytes))
    client.track({ userId: 'u1', event: 'E' })
    await client.flush()
    const [request] = captured
    expect(request?.headers.get('content-type')).toBe('text/plain;charset=UTF-8')
    expect(request?.headers.get('authorization')).toBeNull()
    expect(request?.json).toMatchObject({ writeKey, context: { library: { name: 'eventwire' } } })
    expect(sizes).toEqual([new TextEncoder().encode(request?.body).length])
  })

  it('resends the very same bytes on retry', async () => {
    respond.current = (index) => (index === 0 ? new Response(null, { status: 503 }) : Response.json({}))
    const client = new Client('key', { endpoint: ENDPOINT, writeKeyIn: 'body', retry: { baseDelay: 1 } })
    client.track({ userId: 'u1', event: 'E' })
    await client.flush()
    expect(captured).toHaveLength(2)
    expect(captured[1]?.body).toBe(captured[0]?.body)
  })

  it("stays 'header' (HTTP Basic auth) by default outside browsers, and refuses anything else", async () => {
    expect(resolveClientOptions('k', {}).writeKeyIn).toBe('header')
    const client = new Client('key', { endpoint: ENDPOINT })
    client.track({ userId: 'u1', event: 'E' })
    await client.flush()
    expect(captured[0]?.headers.get('authorization')).toBe(`Basic ${btoa('key:')}`)
    expect(captured[0]?.json).not.toHaveProperty('writeKey')
    expect(() => new Client('k', { writeKeyIn: 'query' as never })).toThrow(OptionsError)
    expect(() => new Client('k', { writeKeyIn: 'query' as never })).toThrow(/writeKeyIn.*'header' or 'body'/)
  })
})
