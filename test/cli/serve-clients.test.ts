// `eventwire serve` takes what real clients send, and forwards each event as a webhook that arrives
// verified at `eventwire listen`: @segment/analytics-node and @rudderstack/rudder-sdk-node, pointed
// at it as a user would (Rudder's gzips its bodies), and requests written byte for byte as the Go
// clients analytics-go v2 and v3 write them. Each source has its own destination, a path of a listen
// process: Segment's and Rudder's sign with X-Signature, the Go ones with Standard Webhooks, which
// signs the Webhook-Id header too. Every event is checked at the receiver against what its client sent.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import RudderAnalytics from '@rudderstack/rudder-sdk-node'
import { Analytics } from '@segment/analytics-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateStandardSecret } from '../../src/webhook/index.js'
import { plainEnv, startCli, startListen, type CliProcess } from '../helpers/cli.js'
import { redisForFile } from '../helpers/redis-suite.js'

const redis = redisForFile()

const SHARED_SECRET = 'clients-s3cret-5e6f'
const STANDARD_SECRET = generateStandardSecret()
const KEYS = { segment: 'wk_segment_1a', rudder: 'wk_rudder_2b', go2: 'wk_go2_3c', go3: 'wk_go3_4d' } as const
type Source = keyof typeof KEYS
const STANDARD_SIGNED: readonly Source[] = ['go2', 'go3']

/** A message as a client put it in its batch. */
interface SentMessage {
  readonly type: string
  readonly messageId: string
  readonly timestamp?: string
  readonly context?: Record<string, unknown>
  readonly [field: string]: unknown
}

/** What `eventwire listen --json` prints of one request (src/cli/listen/receiver.ts). */
interface Received {
  readonly path: string
  readonly signature: string
  readonly status: number
  readonly webhookId?: string
  readonly payload: Record<string, unknown>
}

/** A client's error in a line: its message, and serve's answer when it has one (axios's `response.data`). */
function briefly(error: unknown): string {
  const { message, code, reason, response } = (error ?? {}) as {
    message?: unknown
    code?: unknown
    reason?: unknown
    response?: { status?: unknown; data?: unknown }
  }
  const answer = response === undefined ? '' : ` ${String(response.status)} ${JSON.stringify(response.data)}`
  return `${String(message ?? code ?? error)}${reason instanceof Error ? `: ${reason.message}` : ''}${answer}`
}

/*
 * The Go clients' requests, as their source writes them (github.com/segmentio/analytics-go, read at
 * tag 2.1.1 for v2 and v3.3.0 for v3), and as Go's net/http puts a request on the wire.
 *
 * Both versions: `POST {Endpoint}/v1/batch`, never gzipped, with the headers `User-Agent:
 * analytics-go (version: <Version>)`, `Content-Type: application/json` and the write key as the
 * HTTP Basic user with an empty password (`upload` in analytics.go). Each also puts a
 * `Content-Length` in the request's header map (v2's is the length turned into one character, not
 * digits), which Go's request writer skips: it writes the length of the body it was given.
 * `Version` is the constant in analytics.go, not the tag: "2.1.0" at tag 2.1.1 (never raised for
 * that release), "3.0.0" at v3.3.0, as in v3's fixtures.
 *
 * Go's request writer (net/http request.go, `Request.write`) puts `Host` first, then `User-Agent`,
 * then `Content-Length`, then the request's other headers sorted by name (`Authorization`,
 * `Content-Type`), then what the transport adds (transport.go): `Accept-Encoding: gzip`. No
 * `Connection` header: HTTP/1.1 keeps the connection open.
 *
 * v2 (analytics.go, the `Batch` and message structs): the batch is `context` (the library) first,
 * then `batch`, then the batch's `messageId` and `sentAt`. A message's fields come in its struct's
 * order, then the shared `type`, `messageId` and `timestamp`; empty ones are left out. A page's
 * properties are written as `properties`. Times are local, to the second, with an offset without a
 * colon: `2016-04-26T11:14:48-0700`. There is no screen call. Ids are random UUIDs.
 *
 * v3 (message.go `batch`, and alias.go, group.go, identify.go, page.go, screen.go, track.go): the
 * batch is `messageId`, `sentAt`, `batch`, `context`. A message starts with `type` and
 * `messageId`, then its ids and fields, `timestamp`, its own `context`, `properties` or `traits`.
 * Times are Go's `time.Time` in JSON: RFC 3339 with up to nine fraction digits, trailing zeros
 * dropped, the local offset with a colon. A context (context.go) is written as a map: keys
 * sorted, empty fields left out; the client always sets the batch's `library`.
 *
 * Go's encoding/json writes map keys sorted (properties, traits) and escapes `&`, `<` and `>` as
 * `\u0026`, `\u003c` and `\u003e`, and writes non-ASCII text (`é`) as its UTF-8 bytes.
 */
const GO_IDS = {
  go2: {
    batch: '0b5e4a2c-7f1d-4c8e-9a3b-6d2f1e0c9b8a',
    track: '3f2a9c1e-5b7d-4e6f-8a1b-2c3d4e5f6a7b',
    identify: '6c8d0e2f-4a1b-4c3d-9e5f-7a8b9c0d1e2f',
    page: '9e1f3a5b-7c9d-4b2e-a4c6-8d0e2f4a6b8c',
    group: 'c2d4e6f8-0a1b-4c3d-b5e7-f9a1b3c5d7e9',
    alias: 'e5f7a9b1-c3d5-4e7f-8a9b-0c1d2e3f4a5b',
  },
  go3: {
    batch: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
    track: '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e',
    identify: '3c4d5e6f-7a8b-4c9d-ae0f-2a3b4c5d6e7f',
    page: '4d5e6f7a-8b9c-4dae-bf0a-3b4c5d6e7f8a',
    screen: '5e6f7a8b-9cad-4ebf-800b-4c5d6e7f8a9b',
    group: '6f7a8b9c-adbe-4fc0-910c-5d6e7f8a9bac',
    alias: '7a8b9cad-becf-40d1-a21d-6e7f8a9bacbd',
  },
} as const

const go2 = GO_IDS.go2
/** A batch as analytics-go v2 (2.1.1) writes it, from a process in a UTC-7 zone. */
const GO2_BODY = [
  '{"context":{"library":{"name":"analytics-go","version":"2.1.0"}},"batch":[',
  String.raw`{"properties":{"plan":"pro \u0026 team","price":9.99},"userId":"go2-user","event":"Plan Changed",`,
  `"type":"track","messageId":"${go2.track}","timestamp":"2016-04-26T11:14:48-0700"},`,
  '{"traits":{"email":"ada@example.com","name":"Ada Lovelace"},"userId":"go2-user",',
  `"type":"identify","messageId":"${go2.identify}","timestamp":"2016-04-26T11:14:48-0700"},`,
  String.raw`{"properties":{"path":"/pricing","title":"Café \u003cPricing\u003e"},"userId":"go2-user",`,
  `"category":"Docs","name":"Pricing","type":"page","messageId":"${go2.page}","timestamp":"2016-04-26T11:14:49-0700"},`,
  '{"traits":{"name":"Initech","seats":12},"userId":"go2-user","groupId":"initech",',
  `"type":"group","messageId":"${go2.group}","timestamp":"2016-04-26T11:14:49-0700"},`,
  `{"previousId":"anon-2f9c","userId":"go2-user","type":"alias","messageId":"${go2.alias}",`,
  '"timestamp":"2016-04-26T11:14:50-0700"}',
  `],"messageId":"${go2.batch}","sentAt":"2016-04-26T11:14:53-0700"}`,
].join('')

const go3 = GO_IDS.go3
/** A batch as analytics-go v3 (3.3.0) writes it, from a process in a UTC-7 zone; the track has a context of its own. */
const GO3_BODY = [
  `{"messageId":"${go3.batch}","sentAt":"2023-10-31T11:11:23.004518123-07:00","batch":[`,
  `{"type":"track","messageId":"${go3.track}","userId":"go3-user","event":"Download",`,
  '"timestamp":"2023-10-31T11:11:22.123456789-07:00","context":{"ip":"203.0.113.7","locale":"en-US"},',
  '"properties":{"application":"Segment Desktop","platform":"osx","version":"1.1.0"}},',
  `{"type":"identify","messageId":"${go3.identify}","userId":"go3-user","timestamp":"2023-10-31T11:11:22.20918-07:00",`,
  '"traits":{"email":"grace@example.com","plan":"team"}},',
  `{"type":"page","messageId":"${go3.page}","userId":"go3-user","name":"Docs","timestamp":"2023-10-31T11:11:22.3-07:00",`,
  String.raw`"properties":{"url":"https://example.com/docs?a=1\u0026b=2"}},`,
  `{"type":"screen","messageId":"${go3.screen}","userId":"go3-user","name":"Settings",`,
  '"timestamp":"2023-10-31T11:11:22.456001-07:00","properties":{"tab":"billing"}},',
  `{"type":"group","messageId":"${go3.group}","userId":"go3-user","groupId":"initech",`,
  '"timestamp":"2023-10-31T11:11:22.5-07:00","traits":{"name":"Initech"}},',
  `{"type":"alias","messageId":"${go3.alias}","previousId":"anon-7d1e","userId":"go3-user",`,
  '"timestamp":"2023-10-31T11:11:22.999999999-07:00"}',
  '],"context":{"library":{"name":"analytics-go","version":"3.0.0"}}}',
].join('')

/** The bytes Go's net/http writes for analytics-go's upload of `body` to `url`, with `userAgent` and `writeKey`. */
function goRequest(url: string, userAgent: string, writeKey: string, body: string): Buffer {
  const payload = Buffer.from(body, 'utf8')
  const head = [
    'POST /v1/batch HTTP/1.1',
    `Host: ${new URL(url).host}`,
    `User-Agent: ${userAgent}`,
    `Content-Length: ${payload.length}`,
    `Authorization: Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
    'Content-Type: application/json',
    'Accept-Encoding: gzip',
    '',
    '',
  ].join('\r\n')
  return Buffer.concat([Buffer.from(head, 'latin1'), payload])
}

/** An HTTP/1.1 answer read off the wire. */
interface Answer {
  readonly statusLine: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** A chunked body's data, or undefined while its last chunk has not come. */
function unchunked(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at)
    if (lineEnd < 0) return undefined
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16)
    if (size === 0) return data.indexOf('\r\n\r\n', lineEnd) === lineEnd ? Buffer.concat(parts) : undefined
    if (data.length < lineEnd + 2 + size + 2) return undefined
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

/** The answer in `data`, framed by Content-Length or chunked as Go reads it; undefined while incomplete. */
function answerIn(data: Buffer): Answer | undefined {
  const headEnd = data.indexOf('\r\n\r\n')
  if (headEnd < 0) return undefined
  const [statusLine = '', ...lines] = data.subarray(0, headEnd).toString('latin1').split('\r\n')
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  )
  const rest = data.subarray(headEnd + 4)
  const body =
    headers['transfer-encoding'] === 'chunked'
      ? unchunked(rest)
      : rest.length >= Number(headers['content-length'] ?? 0)
        ? rest.subarray(0, Number(headers['content-length'] ?? 0))
        : undefined
  return body === undefined ? undefined : { statusLine, headers, body: body.toString('utf8') }
}

/** Writes `request` on a new connection exactly as given and reads the one answer, as Go's transport does. */
function exchange(url: string, request: Buffer): Promise<Answer> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let data = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk])
      const answer = answerIn(data)
      if (answer === undefined) return
      socket.destroy()
      resolve(answer)
    })
    socket.on('error', reject)
    // After a resolve this does nothing.
    socket.on('close', () => reject(new Error(`the connection closed before a whole answer: ${data.toString()}`)))
    socket.write(request)
  })
}

describe.runIf(redis.available)(
  'eventwire serve takes what real clients send; each event arrives verified',
  { timeout: 30_000 },
  () => {
    const running: CliProcess[] = []
    let serve: CliProcess
    let url: string
    const listens = {} as Record<'shared' | 'standard', CliProcess>

    beforeAll(async () => {
      const shared = await startListen(['--secret', SHARED_SECRET])
      running.push(shared.cli)
      const standard = await startListen(['--secret', STANDARD_SECRET])
      running.push(standard.cli)
      listens.shared = shared.cli
      listens.standard = standard.cli
      const sources = Object.keys(KEYS) as Source[]
      const config = join(mkdtempSync(join(tmpdir(), 'eventwire-serve-clients-')), 'platform.json')
      writeFileSync(
        config,
        JSON.stringify({
          sources: sources.map((id) => ({ id, writeKey: KEYS[id], destinations: [id] })),
          destinations: sources.map((id) =>
            STANDARD_SIGNED.includes(id)
              ? { id, webhooks: [{ url: `${standard.url}/${id}` }], standardSecret: STANDARD_SECRET }
              : { id, webhooks: [{ url: `${shared.url}/${id}` }], sharedSecret: SHARED_SECRET },
          ),
        }),
      )
      serve = await startCli(
        ['serve', '--config', config, '--port', '0', '--name', 'serve-clients'],
        plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}` }),
      )
      running.push(serve)
      url = String((await serve.waitForRecord((record) => record['event'] === 'listening', 20_000))['url'])
    }, 40_000)

    afterAll(async () => {
      await Promise.all(running.splice(0).map((cli) => (cli.child.exitCode === null ? cli.stop('SIGKILL') : undefined)))
    })

    /** The requests listen printed for `source`'s path, once `count` have arrived. */
    async function arrived(source: Source, count: number): Promise<Received[]> {
      const listen = STANDARD_SIGNED.includes(source) ? listens.standard : listens.shared
      const of = () =>
        listen
          .records()
          .filter((record) => record['event'] === 'request' && record['path'] === `/${source}`) as unknown as Received[]
      await listen.waitFor(() => of().length >= count, 20_000)
      return of()
    }

    /** Serve's log lines from `mark` on that say an event was refused or not forwarded. */
    function trouble(mark: number): string[] {
      return serve.lines
        .slice(mark)
        .filter((line) => /"event":"(refused|not-forwarded|unknown-destination)"|"level":"error"/.test(line))
    }

    /** Each received request is verified and answered 200, and they carry exactly the sent messageIds. */
    function expectVerified(received: readonly Received[], sent: ReadonlyMap<string, SentMessage>): void {
      for (const request of received) expect(request).toMatchObject({ signature: 'verified', status: 200 })
      expect(received.map((request) => request.webhookId).sort()).toEqual([...sent.keys()].sort())
    }

    /**
     * Sends a Go client's request, checks serve's answer, and that each message of it arrived
     * verified, once, under its messageId; returns the payloads by Webhook-Id.
     */
    async function deliveredAsGo(
      source: 'go2' | 'go3',
      userAgent: string,
      body: string,
    ): Promise<Record<string, Record<string, unknown>>> {
      const answer = await exchange(url, goRequest(url, userAgent, KEYS[source], body))
      expect({ status: answer.statusLine, body: answer.body }).toEqual({
        status: 'HTTP/1.1 200 OK',
        body: '{"success":true}',
      })
      const ids = GO_IDS[source]
      const messageIds = Object.values(ids).filter((id) => id !== ids.batch)
      const received = await arrived(source, messageIds.length)
      expect(received).toHaveLength(messageIds.length)
      for (const request of received) expect(request).toMatchObject({ signature: 'verified', status: 200 })
      const byId = Object.fromEntries(received.map((request) => [request.webhookId, request.payload]))
      expect(Object.keys(byId).sort()).toEqual(messageIds.sort())
      return byId
    }

    it('@segment/analytics-node 3.1.0: every request answered 200, every call arrives as sent', async () => {
      const mark = serve.lines.length
      // As its README sets it up, with `host` pointed at serve; up to three calls a request.
      const segment = new Analytics({ writeKey: KEYS.segment, host: url, flushAt: 3 })
      const sent = new Map<string, SentMessage>()
      const statuses: number[] = []
      const errors: string[] = []
      segment.on('http_request', (request) => {
        for (const message of (JSON.parse(request.body) as { batch: SentMessage[] }).batch)
          sent.set(message.messageId, message)
      })
      segment.on('http_response', (response) => statuses.push(response.status))
      segment.on('error', (error) => errors.push(briefly(error)))
      segment.track({ userId: 'seg-user', event: 'Order Completed', properties: { total: 42, currency: 'EUR' } })
      segment.identify({ userId: 'seg-user', traits: { plan: 'pro', email: 'ada@example.com' } })
      segment.page({ userId: 'seg-user', name: 'Pricing', properties: { path: '/pricing' } })
      segment.screen({ userId: 'seg-user', name: 'Home' })
      segment.group({ userId: 'seg-user', groupId: 'g7', traits: { seats: 5 } })
      segment.alias({ userId: 'seg-user', previousId: 'anon-1' })
      await segment.closeAndFlush()
      expect(errors).toEqual([])
      expect(statuses.length).toBeGreaterThan(0)
      expect(statuses).toEqual(statuses.map(() => 200))
      expect(sent.size).toBe(6)

      const received = await arrived('segment', 6)
      expect(received).toHaveLength(6)
      expectVerified(received, sent)
      const fields: Record<string, Record<string, unknown>> = {
        track: { userId: 'seg-user', event: 'Order Completed', properties: { total: 42, currency: 'EUR' } },
        identify: { userId: 'seg-user', traits: { plan: 'pro', email: 'ada@example.com' } },
        page: { userId: 'seg-user', properties: { path: '/pricing' } },
        screen: { userId: 'seg-user', name: 'Home' },
        group: { userId: 'seg-user', groupId: 'g7', traits: { seats: 5 } },
        alias: { 'Previous ID': 'anon-1', 'User ID': 'seg-user' },
      }
      for (const { webhookId, payload } of received) {
        const message = sent.get(webhookId ?? '')!
        expect(message.context).toMatchObject({ library: { name: '@segment/analytics-node', version: '3.1.0' } })
        expect(payload, message.type).toEqual({
          version: 1,
          type: message.type,
          timestamp: message.timestamp,
          context: message.context,
          ...fields[message.type],
        })
      }
      expect(received.map((request) => request.payload['type']).sort()).toEqual(Object.keys(fields).sort())
      expect(trouble(mark)).toEqual([])
    })

    it('@rudderstack/rudder-sdk-node 3.0.13: its gzip bodies answered 200, every call arrives as sent', async () => {
      const mark = serve.lines.length
      const statuses: number[] = []
      const errors: string[] = []
      // As its README sets it up, with `dataPlaneUrl` pointed at serve; gzip is on by default.
      const rudder = new RudderAnalytics(KEYS.rudder, {
        dataPlaneUrl: url,
        flushAt: 3,
        logLevel: 'error',
        errorHandler: (error?: unknown) => errors.push(briefly(error)),
        // Only to see each answer's status: what axios counts as success is unchanged.
        axiosConfig: {
          validateStatus: (status: number) => {
            statuses.push(status)
            return status >= 200 && status < 300
          },
        },
      })
      const sent = new Map<string, SentMessage>()
      let gzipped = 0
      // Each call's callback has its request's body: the gzip bytes as sent, or the batch when not gzipped.
      const done = () => {
        let settle = () => {}
        const settled = new Promise<void>((resolve) => (settle = resolve))
        const callback = (error?: unknown, data?: unknown) => {
          if (error !== undefined && error !== null) errors.push(briefly(error))
          else if (Buffer.isBuffer(data)) {
            gzipped++
            for (const message of (JSON.parse(gunzipSync(data).toString('utf8')) as { batch: SentMessage[] }).batch)
              sent.set(message.messageId, message)
          }
          settle()
        }
        return { settled, callback }
      }
      const calls = Array.from({ length: 6 }, done)
      const before = Date.now()
      rudder.track({ userId: 'rud-user', event: 'Trial Started', properties: { days: 14 } }, calls[0]!.callback)
      rudder.identify({ userId: 'rud-user', traits: { plan: 'free', company: 'Initech' } }, calls[1]!.callback)
      rudder.page({ userId: 'rud-user', name: 'Docs', properties: { path: '/docs' } }, calls[2]!.callback)
      rudder.screen({ userId: 'rud-user', name: 'Settings', properties: { tab: 'billing' } }, calls[3]!.callback)
      rudder.group({ userId: 'rud-user', groupId: 'g9', traits: { seats: 3 } }, calls[4]!.callback)
      rudder.alias({ userId: 'rud-user', previousId: 'anon-9' }, calls[5]!.callback)
      await rudder.flush()
      await Promise.all(calls.map((call) => call.settled))
      const after = Date.now()
      expect(errors).toEqual([])
      expect(gzipped).toBe(6)
      expect(statuses.length).toBeGreaterThan(0)
      expect(statuses).toEqual(statuses.map(() => 200))
      expect(sent.size).toBe(6)

      const received = await arrived('rudder', 6)
      expect(received).toHaveLength(6)
      expectVerified(received, sent)
      const fields: Record<string, Record<string, unknown>> = {
        track: { userId: 'rud-user', event: 'Trial Started', properties: { days: 14 } },
        identify: { userId: 'rud-user', traits: { plan: 'free', company: 'Initech' } },
        page: { userId: 'rud-user', properties: { path: '/docs' } },
        screen: { userId: 'rud-user', name: 'Settings' },
        group: { userId: 'rud-user', groupId: 'g9', traits: { seats: 3 } },
        alias: { 'Previous ID': 'anon-9', 'User ID': 'rud-user' },
      }
      for (const { webhookId, payload } of received) {
        const message = sent.get(webhookId ?? '')!
        expect(message.context).toMatchObject({ library: { name: 'analytics-node', version: '3.0.13' } })
        // Rudder sends no `timestamp`: its time is `originalTimestamp`, which serve takes as the call's time.
        expect(message.timestamp).toBeUndefined()
        const stamped = Date.parse(String(payload['timestamp']))
        expect(stamped).toBe(Date.parse(String(message.originalTimestamp)))
        expect(stamped).toBeGreaterThanOrEqual(before)
        expect(stamped).toBeLessThanOrEqual(after)
        expect(payload, message.type).toEqual({
          version: 1,
          type: message.type,
          timestamp: new Date(stamped).toISOString(),
          context: message.context,
          ...fields[message.type],
        })
      }
      // Its identify copies the traits into the context too; that arrives as sent.
      const identify = received.find((request) => request.payload['type'] === 'identify')!
      expect(identify.payload['context']).toMatchObject({ traits: { plan: 'free', company: 'Initech' } })
      expect(received.map((request) => request.payload['type']).sort()).toEqual(Object.keys(fields).sort())
      expect(trouble(mark)).toEqual([])
    })

    it('analytics-go v2 (2.1.1), its request byte for byte: answered 200, each message arrives with its messageId as Webhook-Id', async () => {
      const mark = serve.lines.length
      const byId = await deliveredAsGo('go2', 'analytics-go (version: 2.1.0)', GO2_BODY)
      // The batch's context (the library) reaches every message; `-0700` is read as an offset.
      const common = {
        version: 1,
        userId: 'go2-user',
        context: { library: { name: 'analytics-go', version: '2.1.0' } },
      }
      expect(byId[go2.track]).toEqual({
        ...common,
        type: 'track',
        timestamp: '2016-04-26T18:14:48.000Z',
        event: 'Plan Changed',
        properties: { plan: 'pro & team', price: 9.99 },
      })
      expect(byId[go2.identify]).toEqual({
        ...common,
        type: 'identify',
        timestamp: '2016-04-26T18:14:48.000Z',
        traits: { email: 'ada@example.com', name: 'Ada Lovelace' },
      })
      expect(byId[go2.page]).toEqual({
        ...common,
        type: 'page',
        timestamp: '2016-04-26T18:14:49.000Z',
        properties: { path: '/pricing', title: 'Café <Pricing>' },
      })
      expect(byId[go2.group]).toEqual({
        ...common,
        type: 'group',
        timestamp: '2016-04-26T18:14:49.000Z',
        groupId: 'initech',
        traits: { name: 'Initech', seats: 12 },
      })
      const { userId: _alias, ...aliasCommon } = common
      expect(byId[go2.alias]).toEqual({
        ...aliasCommon,
        type: 'alias',
        timestamp: '2016-04-26T18:14:50.000Z',
        'Previous ID': 'anon-2f9c',
        'User ID': 'go2-user',
      })
      expect(trouble(mark)).toEqual([])
    })

    it('analytics-go v3 (3.3.0), its request byte for byte: answered 200, each message arrives with its messageId as Webhook-Id', async () => {
      const mark = serve.lines.length
      const byId = await deliveredAsGo('go3', 'analytics-go (version: 3.0.0)', GO3_BODY)
      // Nanoseconds are cut to milliseconds, the offset turned to UTC.
      const library = { name: 'analytics-go', version: '3.0.0' }
      const common = { version: 1, userId: 'go3-user', context: { library } }
      expect(byId[go3.track]).toEqual({
        ...common,
        type: 'track',
        timestamp: '2023-10-31T18:11:22.123Z',
        // The message's own context, with the batch's library.
        context: { library, ip: '203.0.113.7', locale: 'en-US' },
        event: 'Download',
        properties: { application: 'Segment Desktop', platform: 'osx', version: '1.1.0' },
      })
      expect(byId[go3.identify]).toEqual({
        ...common,
        type: 'identify',
        timestamp: '2023-10-31T18:11:22.209Z',
        traits: { email: 'grace@example.com', plan: 'team' },
      })
      expect(byId[go3.page]).toEqual({
        ...common,
        type: 'page',
        timestamp: '2023-10-31T18:11:22.300Z',
        properties: { url: 'https://example.com/docs?a=1&b=2' },
      })
      expect(byId[go3.screen]).toEqual({
        ...common,
        type: 'screen',
        timestamp: '2023-10-31T18:11:22.456Z',
        name: 'Settings',
      })
      expect(byId[go3.group]).toEqual({
        ...common,
        type: 'group',
        timestamp: '2023-10-31T18:11:22.500Z',
        groupId: 'initech',
        traits: { name: 'Initech' },
      })
      const { userId: _alias, ...aliasCommon } = common
      expect(byId[go3.alias]).toEqual({
        ...aliasCommon,
        type: 'alias',
        timestamp: '2023-10-31T18:11:22.999Z',
        'Previous ID': 'anon-7d1e',
        'User ID': 'go3-user',
      })
      expect(trouble(mark)).toEqual([])
    })
  },
)
