// The HTTP side of `eventwire serve`, in this process on a real loopback server: what it reads of an
// ingest request (paths, methods, write keys in the header and the body, gzip, limits), what it
// hands over to be stored, and how it answers a store that failed, health and readiness.
import { connect, type AddressInfo, type Socket } from 'node:net'
import type { Server } from 'node:http'
import { gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { WireMessage } from '../../src/index.js'
import { createServeServer, RETRY_AFTER_S, type ServedSource } from '../../src/cli/serve/serve-server.js'
import type { WriteKeys } from '../../src/cli/ingest/ingest-request.js'
import { SourceRates } from '../../src/cli/serve/source-rates.js'
import { INGEST_PATHS, ingestKind } from '../../src/cli/ingest/ingest-request.js'

const SHOP: ServedSource = { id: 'shop', destinations: ['acme'] }
const BLOG: ServedSource = { id: 'blog', destinations: [] }

/** Write keys as serve finds them in the registry, here a map: `wk_shop` and `wk_shop_next` are shop's. */
function keysOf(byKey: Record<string, ServedSource>): WriteKeys<ServedSource> {
  return {
    // As the registry answers once it is read: a promise.
    sourceOf: async (key) => byKey[key],
    missingHint: 'send the write key as the HTTP Basic auth user name, or in the body.',
    wrongHint: 'no source has that write key.',
  }
}
const basic = (key: string, password = '') => `Basic ${Buffer.from(`${key}:${password}`).toString('base64')}`
const track = { type: 'track', userId: 'u1', event: 'Paid' }

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})

interface Started {
  server: Server
  url: string
  stored: Array<{ source: string; messages: WireMessage[] }>
  logged: Array<Record<string, unknown>>
  state: { fail?: unknown; ready: boolean | 'throws' }
}

/** The server on a free port, with no rate limit unless given one; its clock stands still. */
async function start(limits: { rate?: number; maxConnections?: number } = {}): Promise<Started> {
  const stored: Started['stored'] = []
  const logged: Started['logged'] = []
  const state: Started['state'] = { ready: true }
  const rates = new SourceRates(limits.rate ?? 0, () => 1_000)
  const server = createServeServer(
    {
      keys: keysOf({ wk_shop: SHOP, wk_shop_next: SHOP, wk_blog: BLOG }),
      admit: (source) => rates.admit(source),
      unreported: () => rates.unreported(),
      store: async (source, messages) => {
        if (state.fail !== undefined) throw state.fail
        stored.push({ source: source.id, messages })
      },
      ready: async () => {
        if (state.ready === 'throws') throw new Error('no Redis')
        return state.ready
      },
      log: (entry) => logged.push({ ...entry }),
    },
    limits.maxConnections,
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => server.close(() => resolve())))
  closers.push(async () => server.closeAllConnections())
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stored, logged, state }
}

const post = (url: string, body: string | Buffer, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body as BodyInit })
const json = (value: unknown) => JSON.stringify(value)
const answered = async (response: Response) => ({ status: response.status, ...(await response.json()) })

describe('the ingest API of eventwire serve', () => {
  it('cuts off requests that stall, and takes at most 100 headers', () => {
    const server = createServeServer({
      keys: keysOf({}),
      admit: () => ({ waitMs: 0 }),
      store: async () => undefined,
      ready: async () => true,
      log: () => undefined,
    })
    expect([server.headersTimeout, server.requestTimeout, server.maxHeadersCount, server.maxConnections]).toEqual([
      10_000, 10_000, 100, 1_000,
    ])
  })

  it('takes repeated and trailing slashes as one and none: a client whose endpoint ends in "/" is served', async () => {
    for (const [path, kind] of [
      ['/v1/batch', 'batch'],
      ['//v1/batch', 'batch'],
      ['/v1//track', 'track'],
      ['/v1/batch/', 'batch'],
      ['//v1//identify//', 'identify'],
      ['/v1/batchx', undefined],
      ['/v1', undefined],
      ['/', undefined],
      ['//', undefined],
      ['/v1/batch/x', undefined],
    ] as const)
      expect(ingestKind(path), path).toBe(kind)
    const { url, stored } = await start()
    const response = await post(`${url}//v1/batch/`, json({ batch: [track] }), { authorization: basic('wk_shop') })
    expect(response.status).toBe(200)
    expect(stored).toHaveLength(1)
  })

  it('has the batch path and one path per call type', () => {
    expect(INGEST_PATHS).toEqual({
      '/v1/batch': 'batch',
      '/v1/identify': 'identify',
      '/v1/track': 'track',
      '/v1/page': 'page',
      '/v1/screen': 'screen',
      '/v1/group': 'group',
      '/v1/alias': 'alias',
    })
  })

  it('hands over a batch to its source, by the Basic user name (password ignored) or the body, and answers 200', async () => {
    const { url, stored, logged } = await start()
    const byHeader = await post(`${url}/v1/batch`, json({ batch: [track] }), { authorization: basic('wk_shop', 'x') })
    expect(await answered(byHeader)).toEqual({ status: 200, success: true })
    expect(byHeader.headers.get('access-control-allow-origin')).toBe('*')
    expect(byHeader.headers.get('content-type')).toBe('application/json')
    // A user name alone, without ":", and more than one space after Basic: the key all the same.
    const bare = await post(`${url}/v1/batch`, json({ batch: [track] }), {
      authorization: `Basic   ${Buffer.from('wk_shop').toString('base64')}`,
    })
    expect(bare.status).toBe(200)
    const byBody = await post(`${url}/v1/batch?x=1`, json({ writeKey: 'wk_blog', batch: [track, track] }))
    expect(byBody.status).toBe(200)
    // Both, the same source: taken.
    const both = await post(`${url}/v1/batch`, json({ writeKey: 'wk_shop', batch: [track] }), {
      authorization: basic('wk_shop_next'),
    })
    expect(both.status).toBe(200)
    expect(stored.map((entry) => [entry.source, entry.messages.length])).toEqual([
      ['shop', 1],
      ['shop', 1],
      ['blog', 2],
      ['shop', 1],
    ])
    expect(stored[0]?.messages[0]).toMatchObject({ type: 'track', userId: 'u1', event: 'Paid' })
    expect(typeof stored[0]?.messages[0]?.messageId).toBe('string')
    expect(logged).toEqual([])
  })

  it('takes one call at its type’s path, the type the path’s, the key off the message', async () => {
    const { url, stored } = await start()
    for (const [path, body] of [
      ['/v1/track', { type: 'identify', userId: 'u1', event: 'Paid', writeKey: 'wk_shop' }],
      ['/v1/identify', { userId: 'u1', traits: { plan: 'pro' } }],
      ['/v1/page', { userId: 'u1', name: 'Home' }],
      ['/v1/screen', { userId: 'u1', name: 'Home' }],
      ['/v1/group', { userId: 'u1', groupId: 'g1' }],
      ['/v1/alias', { userId: 'u1', previousId: 'a1' }],
    ] as const) {
      const response = await post(`${url}${path}`, json(body), { authorization: basic('wk_shop') })
      expect(response.status, path).toBe(200)
    }
    expect(stored.map((entry) => entry.messages[0]?.type)).toEqual([
      'track',
      'identify',
      'page',
      'screen',
      'group',
      'alias',
    ])
    expect(stored[0]?.messages[0]).not.toHaveProperty('writeKey')
    expect(
      await answered(await post(`${url}/v1/track`, json([track]), { authorization: basic('wk_shop') })),
    ).toMatchObject({
      status: 400,
      code: 'ERR_BAD_BATCH',
      error: 'the body must be a JSON object: one track message.',
    })
    expect(await answered(await post(`${url}/v1/track`, '{', { authorization: basic('wk_shop') }))).toMatchObject({
      status: 400,
      code: 'ERR_NOT_JSON',
    })
  })

  it('refuses a call without a key, or with one no source has, or with two of different sources', async () => {
    const { url, stored, logged } = await start()
    const cases: Array<[Record<string, string>, unknown, string]> = [
      [{}, { batch: [track] }, 'send the write key as the HTTP Basic auth user name'],
      [{ authorization: 'Bearer wk_shop' }, { batch: [track] }, 'send the write key'],
      [{ authorization: 'Basic' }, { batch: [track] }, 'send the write key'],
      [
        { authorization: `xBasic ${Buffer.from('wk_shop:').toString('base64')}` },
        { batch: [track] },
        'send the write key',
      ],
      [
        { authorization: `Basic ${Buffer.from('wk_shop:').toString('base64')} more` },
        { batch: [track] },
        'send the write key',
      ],
      [{ authorization: basic('wk_nope') }, { batch: [track] }, 'no source has that write key'],
      [{}, { writeKey: 'wk_nope', batch: [track] }, 'no source has that write key'],
      [{}, { writeKey: 7, batch: [track] }, 'no source has that write key'],
      [{ authorization: basic('wk_shop') }, { writeKey: 'wk_blog', batch: [track] }, 'no source has that write key'],
      [{ authorization: basic('wk_shop') }, { writeKey: 'wk_nope', batch: [track] }, 'no source has that write key'],
    ]
    for (const [headers, body, said] of cases) {
      const response = await answered(await post(`${url}/v1/batch`, json(body), headers))
      expect(response, JSON.stringify([headers, body])).toMatchObject({
        status: 401,
        success: false,
        code: 'ERR_UNAUTHORIZED',
        error: expect.stringContaining(said),
      })
    }
    expect(stored).toEqual([])
    // The first 401 of a second is logged whole; the others are counted, and told once a second.
    await vi.waitFor(() => expect(logged).toHaveLength(2), { timeout: 5_000 })
    expect(logged[1]).toEqual({ level: 'warn', event: 'unauthorized', refused: cases.length - 1 })
    // A refusal before the source is known names none.
    expect(Object.keys(logged[0] as object)).not.toContain('source')
    expect(logged[0]).toEqual({
      level: 'warn',
      event: 'refused',
      path: '/v1/batch',
      status: 401,
      code: 'ERR_UNAUTHORIZED',
      reason: expect.stringContaining('send the write key'),
    })
    // Nothing of a key in a log line.
    expect(JSON.stringify(logged)).not.toContain('wk_')
  })

  it('reads gzip, refuses broken gzip, other encodings and bodies past the limit, gzipped or not', async () => {
    const { url, stored } = await start()
    const key = { authorization: basic('wk_shop') }
    const zipped = gzipSync(json({ batch: [track] }))
    for (const encoding of ['gzip', 'x-gzip', ' GZIP ']) {
      expect((await post(`${url}/v1/batch`, zipped, { ...key, 'content-encoding': encoding })).status, encoding).toBe(
        200,
      )
    }
    for (const encoding of ['identity', '']) {
      expect(
        (await post(`${url}/v1/batch`, json({ batch: [track] }), { ...key, 'content-encoding': encoding })).status,
      ).toBe(200)
    }
    expect(stored).toHaveLength(5)
    expect(
      await answered(await post(`${url}/v1/batch`, 'not gzip', { ...key, 'content-encoding': 'gzip' })),
    ).toMatchObject({
      status: 400,
      code: 'ERR_ENCODING',
      error: expect.stringMatching(/^the body is not valid gzip/),
    })
    expect(await answered(await post(`${url}/v1/batch`, zipped, { ...key, 'content-encoding': 'br' }))).toMatchObject({
      status: 415,
      code: 'ERR_ENCODING',
      error: 'Content-Encoding "br" is not taken: send gzip, or no encoding.',
    })
    // gzip's framing may take a body that is within the limit as JSON a little past it: taken.
    const shell = json({ batch: [{ ...track, properties: { pad: '' } }] })
    const dense = json({ batch: [{ ...track, properties: { pad: 'x'.repeat(499_990 - Buffer.byteLength(shell)) } }] })
    expect(Buffer.byteLength(dense)).toBe(499_990)
    const framed = gzipSync(dense, { level: 0 })
    expect(framed.length).toBeGreaterThan(500_000)
    const takenOk = await post(`${url}/v1/batch`, framed, { ...key, 'content-encoding': 'gzip' })
    expect(await answered(takenOk)).toMatchObject({ status: 400, code: 'ERR_MESSAGE_TOO_LARGE' })
    const big = json({ batch: [{ ...track, properties: { pad: 'x'.repeat(500_001) } }] })
    const over = 'a body may be at most 500000 bytes of JSON.'
    expect(await answered(await post(`${url}/v1/batch`, big, key))).toMatchObject({ status: 413, error: over })
    // A small gzip body that inflates past the limit: refused without being inflated whole.
    expect(
      await answered(await post(`${url}/v1/batch`, gzipSync(big), { ...key, 'content-encoding': 'gzip' })),
    ).toMatchObject({
      status: 413,
      code: 'ERR_BODY_TOO_LARGE',
    })
    expect(stored).toHaveLength(5)
  })

  it("takes a call's originalTimestamp as its time when it has no timestamp, as RudderStack's clients send it", async () => {
    const { url, stored } = await start()
    const batch = [
      { ...track, originalTimestamp: '2026-11-29T06:00:00.123Z' },
      { ...track, timestamp: '2026-11-29T05:00:00.000Z', originalTimestamp: '2026-11-29T06:00:00.123Z' },
      { ...track, originalTimestamp: 'yesterday' },
      { ...track, originalTimestamp: '2026-11-29T06:00:00Z', properties: 7 },
    ]
    const before = Date.now()
    const taken = await post(`${url}/v1/batch`, json({ batch: batch.slice(0, 3) }), { authorization: basic('wk_shop') })
    expect(taken.status).toBe(200)
    const times = stored[0]?.messages.map((message) => message.timestamp)
    // The call's own timestamp wins; one that is not a time gets the time the call arrived.
    expect(times?.slice(0, 2)).toEqual(['2026-11-29T06:00:00.123Z', '2026-11-29T05:00:00.000Z'])
    expect(Date.parse(times?.[2] as string)).toBeGreaterThanOrEqual(before - 1)
    // Any other fault of the call is told as it would be without one.
    const refused = await post(`${url}/v1/batch`, json({ batch: batch.slice(3) }), { authorization: basic('wk_shop') })
    expect(await answered(refused)).toMatchObject({
      status: 400,
      error: expect.stringMatching(/^batch\[0\]: .*properties/),
    })
  })

  it('refuses a batch with one bad message whole, with the client’s error, naming the message', async () => {
    const { url, stored } = await start()
    const response = await answered(
      await post(`${url}/v1/batch`, json({ batch: [track, { type: 'track', userId: 'u1' }] }), {
        authorization: basic('wk_shop'),
      }),
    )
    expect(response).toMatchObject({
      status: 400,
      code: 'ERR_MISSING_EVENT',
      error: expect.stringMatching(/^batch\[1\]: /),
    })
    expect(stored).toEqual([])
  })

  it('answers other methods, other paths, preflights, health and readiness', async () => {
    const { url, state, logged } = await start()
    expect(await answered(await fetch(`${url}/v1/batch`))).toMatchObject({
      status: 405,
      code: 'ERR_METHOD',
      error: '/v1/batch takes POST, not GET.',
    })
    expect(await answered(await fetch(`${url}/v1/track`, { method: 'PUT', body: '{}' }))).toMatchObject({
      status: 405,
      error: '/v1/track takes POST, not PUT.',
    })
    expect(await answered(await post(`${url}/v2/batch`, '{}'))).toMatchObject({
      status: 404,
      code: 'ERR_NOT_FOUND',
      error: 'nothing at /v2/batch: the ingest API is POST /v1/batch, or /v1/<type>.',
    })
    const preflight = await fetch(`${url}/v1/batch`, { method: 'OPTIONS' })
    expect(preflight.status).toBe(204)
    const allowed: Record<string, string> = {}
    preflight.headers.forEach((value, name) => {
      if (name.startsWith('access-control')) allowed[name] = value
    })
    expect(allowed).toEqual({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'authorization, content-type, content-encoding',
      'access-control-max-age': '600',
    })
    expect(await answered(await fetch(`${url}/healthz`))).toEqual({ status: 200, ok: true })
    expect(await answered(await fetch(`${url}/readyz`))).toEqual({ status: 200, ready: true })
    state.ready = false
    expect(await answered(await fetch(`${url}/readyz`))).toEqual({ status: 503, ready: false })
    state.ready = 'throws'
    expect(await answered(await fetch(`${url}/readyz`))).toEqual({ status: 503, ready: false })
    expect(logged.map((entry) => entry['status'])).toEqual([405, 405, 404])
  })

  it('answers 503 with Retry-After when the store could not take the events, 500 for anything else, and logs the source', async () => {
    const { url, state, logged } = await start()
    const send = () => post(`${url}/v1/batch`, json({ batch: [track] }), { authorization: basic('wk_shop') })
    state.fail = Object.assign(new Error('Redis did not answer.'), { code: 'ERR_TIMEOUT' })
    const unavailable = await send()
    expect(unavailable.headers.get('retry-after')).toBe(String(RETRY_AFTER_S))
    expect(unavailable.headers.get('access-control-allow-origin')).toBe('*')
    expect(await answered(unavailable)).toEqual({
      status: 503,
      success: false,
      code: 'ERR_UNAVAILABLE',
      error: 'the events were not stored: Redis did not answer in time. Send the request again.',
    })
    state.fail = new Error('boom')
    const failed = await send()
    expect(failed.headers.get('retry-after')).toBeNull()
    expect(await answered(failed)).toMatchObject({ status: 500, code: 'ERR_INTERNAL' })
    expect(logged).toEqual([
      expect.objectContaining({ level: 'error', status: 503, source: 'shop', path: '/v1/batch' }),
      expect.objectContaining({ level: 'error', status: 500, source: 'shop' }),
    ])
    expect(RETRY_AFTER_S).toBe(1)
    // A refusal closes the connection: an unread body would keep it busy.
    expect(unavailable.headers.get('connection')).toBe('close')
  })

  it('answers 429 with Retry-After to a source over its rate, before reading its body, and holds no other source', async () => {
    const { url, stored, logged } = await start({ rate: 2 })
    const shop = () => post(`${url}/v1/batch`, json({ batch: [track] }), { authorization: basic('wk_shop') })
    const blog = () => post(`${url}/v1/batch`, json({ writeKey: 'wk_blog', batch: [track] }))
    expect([(await shop()).status, (await shop()).status]).toEqual([200, 200])
    const limited = await shop()
    expect(limited.headers.get('retry-after')).toBe('1')
    expect(limited.headers.get('connection')).toBe('close')
    expect(limited.headers.get('access-control-allow-origin')).toBe('*')
    expect(await answered(limited)).toEqual({
      status: 429,
      success: false,
      code: 'ERR_RATE_LIMITED',
      error:
        'this source sends more requests a second than it may. Send again after 1 s, or batch more events a request.',
    })
    // A key in the header is refused before the body is read: a body past the limit is not a 413.
    const big = json({ batch: [{ ...track, properties: { pad: 'x'.repeat(600_000) } }] })
    expect((await post(`${url}/v1/batch`, big, { authorization: basic('wk_shop') })).status).toBe(429)
    // Another source has its own rate; a key in the body is held to it once the body is read.
    expect([(await blog()).status, (await blog()).status, (await blog()).status]).toEqual([200, 200, 429])
    // A key in the header and the body is one request of one source: counted once.
    const { url: other } = await start({ rate: 2 })
    const both = () =>
      post(`${other}/v1/batch`, json({ writeKey: 'wk_shop', batch: [track] }), { authorization: basic('wk_shop') })
    expect([(await both()).status, (await both()).status, (await both()).status]).toEqual([200, 200, 429])
    expect(stored.map((entry) => entry.source)).toEqual(['shop', 'shop', 'blog', 'blog'])
    // A line for each source's first refusal at once; the next ones a second later, with their count.
    expect(logged.slice(0, 2)).toEqual([
      { level: 'warn', event: 'rate-limited', path: '/v1/batch', source: 'shop', refused: 1 },
      { level: 'warn', event: 'rate-limited', path: '/v1/batch', source: 'blog', refused: 1 },
    ])
    await vi.waitFor(
      () => expect(logged.slice(2)).toEqual([{ level: 'warn', event: 'rate-limited', source: 'shop', refused: 1 }]),
      { timeout: 5_000 },
    )
  })

  it('closes connections past its limit as they come, and logs that every 10 s at most', async () => {
    const { server, url, logged } = await start({ maxConnections: 2 })
    const held: Socket[] = []
    closers.push(async () => {
      for (const socket of held) socket.destroy()
    })
    const port = (server.address() as AddressInfo).port
    let accepted = 0
    server.on('connection', () => accepted++)
    const open = () => {
      const socket = connect(port, '127.0.0.1')
      held.push(socket)
      return new Promise<{ socket: Socket; closed: Promise<string> }>((resolve) =>
        socket.once('connect', () => {
          let data = ''
          socket.on('data', (chunk) => (data += chunk.toString()))
          resolve({ socket, closed: new Promise((ended) => socket.once('close', () => ended(data))) })
        }),
      )
    }
    await open()
    await open()
    await expect.poll(() => accepted).toBe(2)
    const third = await open()
    third.socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n')
    // Closed unanswered.
    expect(await third.closed).toBe('')
    const fourth = await open()
    expect(await fourth.closed).toBe('')
    expect(logged).toEqual([{ level: 'warn', event: 'connections-full', maxConnections: 2, dropped: 1 }])
    expect(accepted).toBe(2)
    // Once one of the two goes, a new connection is served.
    held[0]?.destroy()
    await expect.poll(async () => (await fetch(`${url}/healthz`).catch(() => undefined))?.status).toBe(200)
  })

  it('reads a body past the limit to its end before it answers 413, so a sender still writing gets the answer', async () => {
    const { server } = await start()
    const port = (server.address() as AddressInfo).port
    /** Writes each piece once the one before is written, then ends; resolves with what came back and any socket error. */
    const sendRaw = (pieces: string[]) =>
      new Promise<{ answer: string; error?: string }>((resolve) => {
        const socket = connect(port, '127.0.0.1')
        let answer = ''
        let error: string | undefined
        socket.on('data', (chunk) => (answer += chunk.toString()))
        socket.on('error', (failure: NodeJS.ErrnoException) => (error = failure.code))
        socket.on('close', () => resolve({ answer, ...(error === undefined ? {} : { error }) }))
        const next = (index: number) =>
          index < pieces.length ? socket.write(pieces[index] as string, () => next(index + 1)) : socket.end()
        socket.on('connect', () => next(0))
      })
    const head = (framing: string) =>
      `POST /v1/batch HTTP/1.1\r\nhost: x\r\nauthorization: ${basic('wk_shop')}\r\n${framing}\r\n\r\n`
    const half = 'x'.repeat(350_000)
    const chunk = `${half.length.toString(16)}\r\n${half}\r\n`
    for (const pieces of [
      [head('content-length: 700000'), half, half],
      [head('transfer-encoding: chunked'), chunk, `${chunk}0\r\n\r\n`],
    ]) {
      const { answer, error } = await sendRaw(pieces)
      expect(error, pieces[0]).toBeUndefined()
      expect(answer, pieces[0]).toMatch(/^HTTP\/1\.1 413 /)
      expect(answer, pieces[0]).toContain('"code":"ERR_BODY_TOO_LARGE"')
    }
  })
})
