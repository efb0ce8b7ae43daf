import { once } from 'node:events'
import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '../../src/index.js'
import { formatActivity } from '../../src/cli/dev/format.js'
import { startDev, type CliProcess } from '../helpers/cli.js'

const running: CliProcess[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => cli.stop()))
})

async function dev(args: readonly string[] = []) {
  const started = await startDev(args)
  running.push(started.cli)
  return started
}

const PAGE = 'http://localhost:5173'
const batch = (messageId: string, extra: object = {}) =>
  JSON.stringify({ batch: [{ type: 'track', userId: 'u1', event: 'E', messageId }], ...extra })
const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`

/** What a browser sends before a POST with `Authorization` and JSON to another origin. */
const preflight = (url: string, origin: string, extra: Record<string, string> = {}) =>
  fetch(`${url}/v1/batch`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type',
      ...extra,
    },
  })

describe('eventwire dev for browsers', () => {
  it('runs without --webhook and shows each event it receives, with what it carries', async () => {
    const { cli, url, writeKey } = await dev()
    const listening = cli.records().find((record) => record['event'] === 'listening')
    expect(listening).toMatchObject({ webhooks: [], corsOrigins: ['*'] })
    const client = new Client(writeKey, { endpoint: url })
    client.track({ userId: 'u1', event: 'Signed Up', properties: { plan: 'pro' }, messageId: 'm-1' })
    client.identify({ userId: 'u1', traits: { name: 'Ada' }, messageId: 'm-2' })
    await client.close()
    const received = await cli.waitForRecord(
      () => cli.records().filter((record) => record['event'] === 'received').length === 2,
    )
    expect(received).toBeDefined()
    const records = cli.records().filter((record) => record['event'] === 'received')
    expect(records[0]).toMatchObject({ eventId: 'm-1', type: 'track', label: 'Signed Up', userId: 'u1' })
    expect(records[0]?.['message']).toMatchObject({ properties: { plan: 'pro' } })
    expect(records[1]).toMatchObject({ eventId: 'm-2', type: 'identify' })
  })

  it('shows a received event on one line, its properties cut short and terminal controls escaped', () => {
    const line = formatActivity(
      {
        event: 'received',
        eventId: 'm-1',
        type: 'track',
        label: 'Signed Up',
        userId: 'u1',
        message: {
          type: 'track',
          messageId: 'm-1',
          timestamp: '2026-11-23T00:00:00.000Z',
          userId: 'u1',
          event: 'Signed Up',
          properties: { note: '\u001b[2J', long: 'y'.repeat(500) },
        },
      },
      new Date(0),
    )
    expect(line).toContain('"Signed Up"')
    expect(line).toContain('"note"')
    expect(line).not.toContain('\u001b[2J')
    expect(line).toContain('…')
    expect(line.length).toBeLessThan(300)
  })

  it('answers the CORS preflight of any origin by default, and the POST after it', async () => {
    const { url, writeKey } = await dev()
    const answer = await preflight(url, PAGE, { 'access-control-request-private-network': 'true' })
    expect(answer.status).toBe(204)
    expect(answer.headers.get('access-control-allow-origin')).toBe('*')
    expect(answer.headers.get('access-control-allow-methods')).toBe('POST')
    expect(answer.headers.get('access-control-allow-headers')).toBe('authorization, content-type, content-encoding')
    expect(answer.headers.get('access-control-allow-private-network')).toBe('true')
    const posted = await fetch(`${url}/v1/batch`, {
      method: 'POST',
      headers: { origin: PAGE, authorization: basic(writeKey), 'content-type': 'application/json' },
      body: batch('m-1'),
    })
    expect(posted.status).toBe(200)
    expect(posted.headers.get('access-control-allow-origin')).toBe('*')
  })

  it('with --cors-origin answers only those origins; requests without Origin (servers, curl) still pass', async () => {
    const { cli, url, writeKey } = await dev(['--cors-origin', PAGE, '--cors-origin', 'http://127.0.0.1:3000'])
    const allowed = await preflight(url, PAGE)
    expect(allowed.status).toBe(204)
    expect(allowed.headers.get('access-control-allow-origin')).toBe(PAGE)
    expect(allowed.headers.get('vary')).toBe('Origin')
    const other = await preflight(url, 'http://evil.test')
    expect(other.status).toBe(403)
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
    const post = (origin?: string) =>
      fetch(`${url}/v1/batch`, {
        method: 'POST',
        headers: { ...(origin ? { origin } : {}), 'content-type': 'text/plain' },
        body: batch(`m-${origin ?? 'none'}`, { writeKey }),
      })
    const refused = await post('http://evil.test')
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({ code: 'ERR_ORIGIN', error: expect.stringContaining('--cors-origin') })
    expect((await post(PAGE)).status).toBe(200)
    expect((await post()).status).toBe(200)
    await cli.waitForRecord((record) => record['event'] === 'received' && record['eventId'] === 'm-none')
    expect(cli.records().filter((record) => record['event'] === 'received')).toHaveLength(2)
  })

  it('takes the write key in the body, as a CORS-simple request sends it', async () => {
    const { url, writeKey } = await dev()
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${url}/v1/batch`, { method: 'POST', headers: { 'content-type': 'text/plain', ...headers }, body })
    expect((await post(batch('m-1', { writeKey }))).status).toBe(200)
    const wrong = await post(batch('m-2', { writeKey: 'not-it' }))
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toMatchObject({ code: 'ERR_UNAUTHORIZED', error: expect.stringContaining('not this') })
    const missing = await post(batch('m-3'))
    expect(missing.status).toBe(401)
    expect((await missing.json()).error).toContain('"writeKey" in the body')
    // A right header does not excuse a wrong key in the body, nor a right body a wrong header.
    expect((await post(batch('m-4', { writeKey: 'not-it' }), { authorization: basic(writeKey) })).status).toBe(401)
    expect((await post(batch('m-5', { writeKey }), { authorization: basic('not-it') })).status).toBe(401)
    expect((await post(batch('m-6', { writeKey: 42 }))).status).toBe(401)
  })

  it('cuts off a request whose body stalls, with 408, instead of holding it for minutes', async () => {
    const { url } = await dev()
    const { port } = new URL(url)
    const socket = connect(Number(port), '127.0.0.1')
    await once(socket, 'connect')
    socket.write(
      'POST /v1/batch HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n{"batch"',
    )
    let answer = ''
    socket.on('data', (chunk) => {
      answer += chunk
    })
    // Node's own default would be 300 s: the server must end it by its 10 s limit.
    const started = Date.now()
    await once(socket, 'close')
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
    expect(Date.now() - started).toBeLessThan(30_000)
  }, 40_000)

  it("takes the Client's batches with writeKeyIn: 'body'", async () => {
    const { cli, url, writeKey } = await dev()
    const client = new Client(writeKey, { endpoint: url, writeKeyIn: 'body' })
    const errors: unknown[] = []
    client.on('error', (error) => errors.push(error))
    client.track({ userId: 'u1', event: 'E', messageId: 'from-body' })
    await client.close()
    expect(errors).toEqual([])
    await cli.waitForRecord((record) => record['event'] === 'received' && record['eventId'] === 'from-body')
  })
})
