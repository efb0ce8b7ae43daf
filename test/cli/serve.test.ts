// `eventwire serve` against a real Redis, as real processes: the ingest API takes what the
// platform's clients send (the project's own Client, single calls, gzip, the write key in the body),
// answers 200 once Redis holds the events, and the workers deliver each to its source's
// destinations, signed with each destination's secret; it refuses what it cannot take with the
// status and reason a client needs, logs JSON lines without keys or secrets, and stops on SIGTERM.
import { createHmac } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Client } from '../../src/index.js'
import { WebhookQueue } from '../../src/webhook/bullmq/index.js'
import { plainEnv, runCli, startCli, type CliProcess } from '../helpers/cli.js'
import { startRedis } from '../helpers/redis.js'
import { redisForFile } from '../helpers/redis-suite.js'
import { startSink, type Sink } from '../helpers/sink.js'

const redis = redisForFile()
const folder = mkdtempSync(join(tmpdir(), 'eventwire-serve-'))
const running: CliProcess[] = []
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => (cli.child.exitCode === null ? cli.stop('SIGKILL') : undefined)))
  await Promise.all(open.splice(0).map((item) => item.close()))
})
let queues = 0

const SHOP_KEY = 'wk_shop_4f1c2a9e7b'
const BLOG_KEY = 'wk_blog_77d0e1'
const ACME_SECRET = 'acme-s3cret-9a8b'
const BETA_SECRET = 'beta-s3cret-1c2d'

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`
const signed = (body: string, secret: string) => createHmac('sha1', secret).update(body).digest('hex')

describe.runIf(redis.available)('eventwire serve', () => {
  async function sink(): Promise<Sink> {
    const started = await startSink()
    open.push(started)
    return started
  }

  /** A config of two sources and two destinations; shop's events go to both, blog's to beta. */
  function configFile(acme: Sink, beta: Sink, extra: Record<string, unknown> = {}): string {
    const file = join(folder, `config-${++queues}.json`)
    writeFileSync(
      file,
      JSON.stringify({
        sources: [
          { id: 'shop', writeKey: SHOP_KEY, destinations: ['acme', 'beta'] },
          { id: 'blog', writeKey: [BLOG_KEY, 'wk_blog_next'], destinations: ['beta'] },
        ],
        destinations: [
          { id: 'acme', webhooks: [{ url: acme.url }], sharedSecret: ACME_SECRET },
          { id: 'beta', webhooks: [{ url: beta.url }], sharedSecret: BETA_SECRET },
        ],
        ...extra,
      }),
    )
    return file
  }

  async function serve(config: string, ...args: string[]): Promise<{ cli: CliProcess; url: string; name: string }> {
    const name = `serve-${queues}`
    const cli = await startCli(
      ['serve', '--config', config, '--port', '0', '--name', name, ...args],
      plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}` }),
    )
    running.push(cli)
    const listening = await cli.waitForRecord((record) => record['event'] === 'listening', 20_000)
    return { cli, url: listening['url'] as string, name }
  }

  /** Waits until `receiver` holds `count` requests. */
  const received = (receiver: Sink, count: number) =>
    vi.waitFor(() => expect(receiver.requests.length).toBeGreaterThanOrEqual(count), { timeout: 15_000 })

  it("delivers what the project's Client sends to each destination of its source, signed with each one's secret", async () => {
    const acme = await sink()
    const beta = await sink()
    const { cli, url } = await serve(configFile(acme, beta))
    const shop = new Client(SHOP_KEY, { endpoint: url, flushAt: 2 })
    shop.track({ userId: 'u1', event: 'Order Completed', properties: { total: 42 } })
    shop.identify({ userId: 'u1', traits: { plan: 'pro' } })
    await shop.close()
    const blog = new Client('wk_blog_next', { endpoint: url })
    blog.page({ userId: 'u2', name: 'Home' })
    await blog.close()
    await received(acme, 2)
    await received(beta, 3)
    expect(acme.requests).toHaveLength(2)
    for (const request of acme.requests) expect(request.headers['x-signature']).toBe(signed(request.body, ACME_SECRET))
    for (const request of beta.requests) expect(request.headers['x-signature']).toBe(signed(request.body, BETA_SECRET))
    const types = beta.requests.map((request) => JSON.parse(request.body).type).sort()
    expect(types).toEqual(['identify', 'page', 'track'])
    // The log names sources, never their keys or the destinations' secrets.
    const stopped = await cli.stop('SIGTERM')
    expect(stopped).toBe(0)
    const output = cli.lines.join('\n') + cli.stderr()
    for (const secret of [SHOP_KEY, BLOG_KEY, 'wk_blog_next', ACME_SECRET, BETA_SECRET])
      expect(output).not.toContain(secret)
    expect(cli.records().map((record) => record['event'])).toEqual(
      expect.arrayContaining(['listening', 'stopping', 'stopped']),
    )
  })

  it('takes single calls, gzip, the key in the body and anonymous calls; answers health and readiness', async () => {
    const acme = await sink()
    const beta = await sink()
    const { cli, url } = await serve(configFile(acme, beta))
    const track = await fetch(`${url}/v1/track`, {
      method: 'POST',
      headers: { authorization: basic(SHOP_KEY), 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'u1', event: 'Single', messageId: 'single-1' }),
    })
    expect(track.status).toBe(200)
    expect(await track.json()).toEqual({ success: true })
    const zipped = await fetch(`${url}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ writeKey: BLOG_KEY, batch: [{ type: 'track', userId: 'u2', event: 'Zipped' }] })),
    })
    expect(zipped.status).toBe(200)
    expect(zipped.headers.get('access-control-allow-origin')).toBe('*')
    await received(acme, 1)
    await received(beta, 2)
    expect(JSON.parse(acme.requests[0]?.body as string)).toMatchObject({ type: 'track', event: 'Single' })
    expect(beta.requests.map((request) => JSON.parse(request.body).event).sort()).toEqual(['Single', 'Zipped'])
    // An anonymous call is taken and not sent (a webhook carries the userId); its batch is not refused.
    const anonymous = await fetch(`${url}/v1/batch`, {
      method: 'POST',
      headers: { authorization: basic(SHOP_KEY), 'content-type': 'application/json' },
      body: JSON.stringify({
        batch: [
          { type: 'page', anonymousId: 'a1', name: 'Home' },
          { type: 'track', userId: 'u3', event: 'Known' },
        ],
      }),
    })
    expect(anonymous.status).toBe(200)
    await received(acme, 2)
    expect(JSON.parse(acme.requests[1]?.body as string)).toMatchObject({ event: 'Known' })
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
    const ready = await fetch(`${url}/readyz`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ ready: true })
    expect(cli.records().find((record) => record['event'] === 'not-forwarded')).toMatchObject({
      source: 'shop',
      events: 1,
    })
    expect(acme.requests).toHaveLength(2)
  })

  it('refuses what it cannot take with the status and the reason, and stores none of it', async () => {
    const acme = await sink()
    const beta = await sink()
    const { cli, url } = await serve(configFile(acme, beta))
    const post = (path: string, body: unknown, headers: Record<string, string> = { authorization: basic(SHOP_KEY) }) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      })
    const refused = async (response: Response) => ({ status: response.status, ...(await response.json()) })
    expect(
      await refused(await post('/v1/batch', { batch: [{ type: 'track', userId: 'u1', event: 'E' }] }, {})),
    ).toMatchObject({
      status: 401,
      code: 'ERR_UNAUTHORIZED',
      error: expect.stringContaining('send the write key as the HTTP Basic auth user name'),
    })
    expect(
      await refused(
        await post(
          '/v1/batch',
          { batch: [{ type: 'track', userId: 'u1', event: 'E' }] },
          { authorization: basic('nope') },
        ),
      ),
    ).toMatchObject({ status: 401, error: expect.stringContaining('no source has that write key') })
    // A key in the body of another source than the header's.
    expect(
      await refused(
        await post('/v1/batch', { writeKey: BLOG_KEY, batch: [{ type: 'track', userId: 'u1', event: 'E' }] }),
      ),
    ).toMatchObject({ status: 401 })
    expect(await refused(await post('/v1/batch', { batch: [{ type: 'track', userId: 'u1' }] }))).toMatchObject({
      status: 400,
      code: 'ERR_MISSING_EVENT',
      error: expect.stringMatching(/^batch\[0\]: /),
    })
    expect(await refused(await post('/v1/batch', '{'))).toMatchObject({ status: 400, code: 'ERR_NOT_JSON' })
    expect(await refused(await post('/v1/track', { userId: 'u1', event: 'x'.repeat(40_000) }))).toMatchObject({
      status: 400,
      code: 'ERR_MESSAGE_TOO_LARGE',
    })
    expect(await refused(await post('/v1/batch', 'x'.repeat(600_000)))).toMatchObject({
      status: 413,
      code: 'ERR_BODY_TOO_LARGE',
    })
    expect(await refused(await post('/v1/nothing', {}))).toMatchObject({ status: 404, code: 'ERR_NOT_FOUND' })
    expect((await fetch(`${url}/v1/batch`)).status).toBe(405)
    // What the Webhooks destination is turned off for, per call, is taken and not sent.
    const off = await post('/v1/batch', {
      batch: [{ type: 'track', userId: 'u1', event: 'Off', integrations: { Webhooks: false } }],
    })
    expect(off.status).toBe(200)
    expect((await post('/v1/track', { userId: 'u1', event: 'After' })).status).toBe(200)
    await received(acme, 1)
    expect(acme.requests.map((request) => JSON.parse(request.body).event)).toEqual(['After'])
    const logged = cli.records().filter((record) => record['event'] === 'refused')
    // The first 401 of a second is logged whole, the next two counted in an `unauthorized` line.
    expect(logged.map((record) => record['status'])).toEqual([401, 400, 400, 400, 413, 404, 405])
    expect(await cli.waitForRecord((record) => record['event'] === 'unauthorized')).toMatchObject({
      level: 'warn',
      refused: 2,
    })
    expect(logged[1]).toMatchObject({ level: 'warn', path: '/v1/batch', code: 'ERR_MISSING_EVENT' })
  })

  it('holds each source to --rate-limit, or to its own rateLimit, with 429 and Retry-After', async () => {
    const acme = await sink()
    const beta = await sink()
    const config = configFile(acme, beta, {
      sources: [
        { id: 'shop', writeKey: SHOP_KEY, destinations: ['acme'] },
        { id: 'blog', writeKey: BLOG_KEY, destinations: ['beta'], rateLimit: 0 },
      ],
    })
    const { cli, url } = await serve(config, '--rate-limit', '1', '--metrics-port', '0')
    const metrics = String((await cli.waitForRecord((record) => record['event'] === 'metrics'))['url'])
    const send = (key: string) =>
      fetch(`${url}/v1/track`, {
        method: 'POST',
        headers: { authorization: basic(key), 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'u1', event: 'Limited' }),
      })
    const first = await send(SHOP_KEY)
    const second = await send(SHOP_KEY)
    expect([first.status, second.status]).toEqual([200, 429])
    expect(second.headers.get('retry-after')).toBe('1')
    expect(await second.json()).toMatchObject({ code: 'ERR_RATE_LIMITED' })
    const blog = await Promise.all(Array.from({ length: 5 }, () => send(BLOG_KEY)))
    expect(blog.map((response) => response.status)).toEqual([200, 200, 200, 200, 200])
    await cli.waitForRecord((record) => record['event'] === 'rate-limited')
    expect(cli.records().find((record) => record['event'] === 'rate-limited')).toMatchObject({
      level: 'warn',
      source: 'shop',
      refused: 1,
    })
    // The 429 is counted under the source it held back.
    expect(await (await fetch(metrics)).text()).toContain(
      'eventwire_serve_requests_total{eventwire_source="shop",http_response_status_code="429"} 1\n',
    )
  })

  it('serves metrics in the Prometheus text format on a port of their own: ingest answers and deliveries, by source and destination', async () => {
    const acme = await sink()
    const beta = await sink()
    const { cli, url } = await serve(configFile(acme, beta), '--metrics-port', '0')
    const metrics = String((await cli.waitForRecord((record) => record['event'] === 'metrics'))['url'])
    expect(metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
    expect(new URL(metrics).port).not.toBe(new URL(url).port)
    const shop = new Client(SHOP_KEY, { endpoint: url })
    shop.track({ userId: 'u1', event: 'Counted' })
    shop.identify({ userId: 'u1', traits: { plan: 'pro' } })
    await shop.close()
    const refused = await fetch(`${url}/v1/batch`, {
      method: 'POST',
      body: JSON.stringify({ batch: [{ type: 'track', userId: 'u1', event: 'No key' }] }),
    })
    expect(refused.status).toBe(401)
    await received(acme, 2)
    await received(beta, 2)
    const scrape = async () => {
      const response = await fetch(metrics)
      expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
      return response.text()
    }
    await vi.waitFor(
      async () => {
        const text = await scrape()
        expect(text).toMatch(
          /^eventwire_webhook_deliveries_total\{.*eventwire_webhook_destination="acme".*outcome="delivered".*\} 2$/m,
        )
        expect(text).toMatch(
          /^eventwire_webhook_deliveries_total\{.*eventwire_webhook_destination="beta".*outcome="delivered".*\} 2$/m,
        )
      },
      { timeout: 10_000 },
    )
    const text = await scrape()
    expect(text).toContain(
      'eventwire_serve_requests_total{eventwire_source="shop",http_response_status_code="200"} 1\n',
    )
    expect(text).toContain('eventwire_serve_requests_total{http_response_status_code="401"} 1\n')
    expect(text).toContain('eventwire_serve_events_total{eventwire_source="shop"} 2\n')
    expect(text).toMatch(/^eventwire_webhook_queue_depth\{/m)
    // Nothing of a key or a secret in the metrics.
    for (const secret of [SHOP_KEY, ACME_SECRET, BETA_SECRET]) expect(text).not.toContain(secret)
    expect((await fetch(new URL('/', metrics))).status).toBe(404)
  })

  it('writes into the registry on SIGHUP what the file has and the registry lacks; a change made with the CLI stands; a file it cannot use writes nothing', async () => {
    const acme = await sink()
    const beta = await sink()
    const shopOnly = { sources: [{ id: 'shop', writeKey: SHOP_KEY, destinations: ['acme'] }] }
    const config = configFile(acme, beta, shopOnly)
    const { cli, url, name } = await serve(config)
    expect(cli.records().find((record) => record['event'] === 'seeded')).toMatchObject({ added: 3, kept: 0 })
    const send = (key: string) =>
      fetch(`${url}/v1/track`, {
        method: 'POST',
        headers: { authorization: basic(key), 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'u1', event: 'Reloaded' }),
      })
    expect([(await send(SHOP_KEY)).status, (await send(BLOG_KEY)).status]).toEqual([200, 401])
    const env = plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}` })
    const admin = (...args: string[]) => runCli([...args, '--name', name], env)
    // shop's key rotated with the CLI, and the file not updated: the rotation stands.
    expect(await admin('sources', 'set', 'shop', '--write-key', 'wk_shop_rotated')).toMatchObject({ code: 0 })
    const reloads = () => cli.records().filter((record) => String(record['event']).startsWith('reload')).length
    // blog comes, with a destination of its own written on the way.
    const written = JSON.parse(readFileSync(config, 'utf8')) as Record<string, unknown[]>
    writeFileSync(
      config,
      JSON.stringify({
        sources: [...(written['sources'] ?? []), { id: 'blog', writeKey: BLOG_KEY, destinations: ['gamma'] }],
        destinations: [...(written['destinations'] ?? []), { id: 'gamma', webhooks: [{ url: beta.url }] }],
      }),
    )
    cli.child.kill('SIGHUP')
    expect(await cli.waitForRecord((record) => record['event'] === 'reloaded')).toMatchObject({
      added: 2,
      kept: 3,
      keptIds: ['destinations.acme', 'destinations.beta', 'sources.shop'],
    })
    expect([
      (await send(BLOG_KEY)).status,
      (await send('wk_shop_rotated')).status,
      (await send(SHOP_KEY)).status,
    ]).toEqual([200, 200, 401])
    await received(beta, 1)
    // Files it cannot use: logged, and nothing of them written.
    for (const broken of [
      '{"sources": [{"id": "x", "writeKey": wk_do_not_print}]}',
      JSON.stringify({ sources: [{ id: 'x', writeKey: 'wk_x', destinations: ['nowhere'] }] }),
      JSON.stringify({
        sources: [{ id: 'news', writeKey: BLOG_KEY, destinations: ['delta'] }],
        destinations: [{ id: 'delta', webhooks: [{ url: beta.url }] }],
      }),
    ]) {
      const before = reloads()
      writeFileSync(config, broken)
      cli.child.kill('SIGHUP')
      await vi.waitFor(() => expect(reloads()).toBe(before + 1))
    }
    const failures = cli.records().filter((record) => record['event'] === 'reload-failed')
    expect(failures.map((record) => record['message'])).toEqual([
      expect.stringContaining('is not JSON'),
      expect.stringContaining('sources[0].destinations[0]: no destination "nowhere"'),
      expect.stringContaining('sources[0].writeKey: source "blog" in the registry has this write key already'),
    ])
    expect(failures[0]).toMatchObject({ level: 'error' })
    // Neither the key nor the text around it in a log line.
    expect(JSON.stringify(cli.records())).not.toContain('do_not_print')
    expect(await admin('destinations', 'show', 'delta')).toMatchObject({ code: 1 })
    expect([(await send(BLOG_KEY)).status, (await send('wk_x')).status]).toEqual([200, 401])
    // A destination a source sends to is not deleted unless asked to be.
    expect(await admin('destinations', 'delete', 'gamma')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('sources "blog" send to "gamma"'),
    })
    // A source deleted from the registry is refused within a second, without a signal.
    expect(await admin('sources', 'delete', 'shop')).toMatchObject({ code: 0 })
    await vi.waitFor(async () => expect((await send('wk_shop_rotated')).status).toBe(401), { timeout: 3_000 })
    expect(cli.child.exitCode).toBeNull()
    // And it stays deleted: a file that still lists it does not bring it back, on SIGHUP or at a start.
    writeFileSync(config, JSON.stringify(written))
    const before = reloads()
    cli.child.kill('SIGHUP')
    await vi.waitFor(() => expect(reloads()).toBe(before + 1))
    // The reload's own line: a 401 logged as repeated may come after it.
    expect(
      cli
        .records()
        .filter((record) => String(record['event']).startsWith('reload'))
        .at(-1),
    ).toMatchObject({
      event: 'reloaded',
      added: 0,
      deleted: 1,
      deletedIds: ['sources.shop'],
      message: expect.stringContaining('stay deleted'),
    })
    const again = await serve(config)
    expect(again.cli.records().find((record) => record['event'] === 'seeded')).toMatchObject({ added: 0 })
    expect([(await send(SHOP_KEY)).status, (await send('wk_shop_rotated')).status]).toEqual([401, 401])
    expect(await admin('sources', 'show', 'shop')).toMatchObject({ code: 1 })
    // Set again with the CLI, it is back.
    expect(await admin('sources', 'set', 'shop', '--write-key', SHOP_KEY, '--destination', 'acme')).toMatchObject({
      code: 0,
    })
    await vi.waitFor(async () => expect((await send(SHOP_KEY)).status).toBe(200), { timeout: 3_000 })
  })

  it('runs without --config on the registry as it is, and takes a source set with eventwire sources within a second', async () => {
    const acme = await sink()
    const env = plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}` })
    const name = `serve-bare-${++queues}`
    const cli = await startCli(['serve', '--port', '0', '--name', name], env)
    running.push(cli)
    const listening = await cli.waitForRecord((record) => record['event'] === 'listening', 20_000)
    expect(listening).toMatchObject({ sources: 0 })
    expect(await cli.waitForRecord((record) => record['event'] === 'no-sources')).toMatchObject({ level: 'warn' })
    const send = () =>
      fetch(`${listening['url']}/v1/track`, {
        method: 'POST',
        headers: { authorization: basic(SHOP_KEY), 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'u1', event: 'Registered' }),
      })
    const refused = await send()
    expect(refused.status).toBe(401)
    expect(await refused.json()).toMatchObject({ error: expect.stringContaining('eventwire sources list') })
    const admin = (...args: string[]) => runCli([...args, '--name', name], env)
    expect(await admin('destinations', 'set', 'acme', '--url', acme.url, '--secret', ACME_SECRET)).toMatchObject({
      code: 0,
    })
    // A new source needs its key and its destinations: said before Redis is written.
    expect(await admin('sources', 'set', 'shop', '--destination', 'acme')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('give its write key with --write-key'),
    })
    expect(await admin('sources', 'set', 'shop', '--write-key', SHOP_KEY, '--destination', 'ghost')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no destination "ghost" in the registry'),
    })
    const set = await admin('sources', 'set', 'shop', '--write-key', SHOP_KEY, '--destination', 'acme')
    expect(set).toMatchObject({ code: 0 })
    // The key is never printed, only its digest.
    expect(set.stdout).not.toContain(SHOP_KEY)
    expect(JSON.parse(set.stdout)).toMatchObject({
      id: 'shop',
      destinations: ['acme'],
      writeKeyDigests: [expect.stringMatching(/^sha256:[0-9a-f]{64}$/)],
    })
    await vi.waitFor(async () => expect((await send()).status).toBe(200), { timeout: 3_000 })
    await received(acme, 1)
    // A rotation: a second key beside the first, then the new one alone; other fields stay.
    expect(await admin('sources', 'set', 'shop', '--add-write-key', 'wk_shop_next')).toMatchObject({ code: 0 })
    const list = await admin('sources', 'list')
    expect(list.stdout).toMatch(/^shop {2}v\d+ {2}2 write keys {2}-> acme$/)
    expect(await admin('sources', 'set', 'shop', '--write-key', 'wk_shop_next')).toMatchObject({ code: 0 })
    await vi.waitFor(async () => expect((await send()).status).toBe(401), { timeout: 3_000 })
    // A rate of its own, then serve's own again.
    expect(JSON.parse((await admin('sources', 'set', 'shop', '--rate-limit', '5')).stdout)).toMatchObject({
      rateLimit: 5,
    })
    const inherited = JSON.parse((await admin('sources', 'set', 'shop', '--rate-limit', 'default')).stdout)
    expect(inherited).not.toHaveProperty('rateLimit')
    expect(inherited).toMatchObject({ destinations: ['acme'] })
    expect(await admin('sources', 'show', 'nope')).toMatchObject({ code: 1 })
    expect(await admin('sources', 'list', '--write-key', 'k')).toMatchObject({ code: 2 })
  })

  it('takes a batch in which a messageId holds a "." for a Standard Webhooks destination: that event is left out and logged, the others sent', async () => {
    const acme = await sink()
    const beta = await sink()
    const std = await sink()
    const config = configFile(acme, beta, {
      sources: [{ id: 'app', writeKey: SHOP_KEY, destinations: ['std'] }],
      destinations: [
        { id: 'std', webhooks: [{ url: std.url }], standardSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
      ],
    })
    const { cli, url } = await serve(config)
    const batch = ['ok-1', 'order.1042', 'ok-2'].map((messageId) => ({
      type: 'track',
      userId: 'u1',
      event: 'Paid',
      messageId,
    }))
    const response = await fetch(`${url}/v1/batch`, {
      method: 'POST',
      headers: { authorization: basic(SHOP_KEY), 'content-type': 'application/json' },
      body: JSON.stringify({ batch }),
    })
    expect(response.status).toBe(200)
    await received(std, 2)
    expect(std.requests.map((request) => request.headers['webhook-id']).sort()).toEqual(['ok-1', 'ok-2'])
    expect(await cli.waitForRecord((record) => record['event'] === 'not-forwarded')).toMatchObject({
      source: 'app',
      destination: 'std',
      events: 1,
      reason: expect.stringContaining('the event id "order.1042" contains a "."'),
    })
  })

  it("takes a disabled destination's events and does not send them, logged as not-forwarded; the source's other destinations get them", async () => {
    const acme = await sink()
    const beta = await sink()
    const { cli, url, name } = await serve(configFile(acme, beta))
    const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.server.port }, name })
    open.push(queue)
    await queue.destinations.disable('acme')
    const send = (event: string) =>
      fetch(`${url}/v1/track`, {
        method: 'POST',
        headers: { authorization: basic(SHOP_KEY), 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'u1', event }),
      })
    // Within a second every process sees the change: until then an event may still go to acme.
    let sent = 0
    await vi.waitFor(
      async () => {
        expect((await send(`While disabled ${sent++}`)).status).toBe(200)
        expect(cli.records().some((record) => record['event'] === 'not-forwarded')).toBe(true)
      },
      { timeout: 10_000 },
    )
    expect(cli.records().find((record) => record['event'] === 'not-forwarded')).toMatchObject({
      source: 'shop',
      destination: 'acme',
      events: 1,
      reason: expect.stringContaining('the destination is disabled'),
    })
    await received(beta, sent)
    const before = acme.requests.length
    await queue.destinations.enable('acme')
    await vi.waitFor(
      async () => {
        expect((await send('Enabled again')).status).toBe(200)
        expect(acme.requests.length).toBeGreaterThan(before)
      },
      { timeout: 10_000 },
    )
    expect(acme.requests.map((request) => JSON.parse(request.body).event)).not.toContain(`While disabled ${sent - 1}`)
  })

  it('answers 503 with Retry-After while Redis refuses the write, and 200 once it takes it again', async () => {
    const acme = await sink()
    const beta = await sink()
    const { cli, url } = await serve(configFile(acme, beta))
    const admin = new Redis({ host: '127.0.0.1', port: redis.server.port })
    open.push({ close: async () => admin.disconnect() })
    const send = () =>
      fetch(`${url}/v1/track`, {
        method: 'POST',
        headers: { authorization: basic(SHOP_KEY), 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'u1', event: 'Full', messageId: 'full-1' }),
      })
    // Full, under noeviction: Redis answers every write OOM.
    await admin.config('SET', 'maxmemory', '1')
    try {
      const full = await send()
      expect(full.status).toBe(503)
      expect(full.headers.get('retry-after')).toBe('1')
      expect(await full.json()).toMatchObject({
        success: false,
        code: 'ERR_UNAVAILABLE',
        error: expect.stringContaining('OOM'),
      })
    } finally {
      await admin.config('SET', 'maxmemory', '0')
    }
    expect((await send()).status).toBe(200)
    await received(acme, 1)
    expect(cli.records().find((record) => record['status'] === 503)).toMatchObject({ level: 'error', source: 'shop' })
  })

  it('runs ingest and workers as separate processes on one Redis', async () => {
    const acme = await sink()
    const beta = await sink()
    const config = configFile(acme, beta)
    const { url, name } = await serve(config, '--role', 'ingest')
    const client = new Client(SHOP_KEY, { endpoint: url })
    client.track({ userId: 'u1', event: 'Apart' })
    await client.close()
    // Stored, and not delivered: no worker yet.
    expect(acme.requests).toHaveLength(0)
    const worker = await startCli(
      ['serve', '--config', config, '--role', 'worker', '--name', name],
      plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}` }),
    )
    running.push(worker)
    await worker.waitForRecord((record) => record['event'] === 'working', 20_000)
    await received(acme, 1)
    await received(beta, 1)
    expect(await worker.stop('SIGTERM')).toBe(0)
  })

  it('exits 1, saying why, when its port is taken or Redis cannot be reached, and leaves nothing running', async () => {
    const acme = await sink()
    const beta = await sink()
    const config = configFile(acme, beta)
    const { url } = await serve(config)
    const port = new URL(url).port
    const taken = await runCli(
      ['serve', '--config', config, '--port', port, '--name', `taken-${queues}`],
      plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}` }),
    )
    expect(taken.code).toBe(1)
    // One JSON line, as every line serve writes: a log collector reads it.
    const failed = taken.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line))
      .find((record) => record.event === 'start-failed')
    expect(failed).toMatchObject({
      level: 'error',
      message: expect.stringContaining(`cannot listen on 127.0.0.1:${port}`),
    })
    expect(taken.stderr).toBe('')
    const away = await runCli(
      ['serve', '--config', config, '--port', '0'],
      plainEnv({ EVENTWIRE_REDIS: 'redis://127.0.0.1:1' }),
    )
    expect(away.code).toBe(1)
    expect(away.stdout).toContain('"event":"start-failed"')
  }, 30_000)

  it("refuses a Redis without the append-only file in --durability's words, and warns of it once under best-effort", async () => {
    const volatile = await startRedis({ persistent: false })
    open.push({ close: () => volatile.dispose() })
    const env = plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${volatile.port}` })
    const refused = await runCli(['serve', '--port', '0'], env)
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain('"event":"start-failed"')
    expect(refused.stdout).toContain('appendonly no')
    expect(refused.stdout).toContain('run serve with --durability best-effort')
    expect(refused.stdout).not.toContain('WebhookQueue')
    const lax = await startCli(['serve', '--port', '0', '--durability', 'best-effort'], env)
    running.push(lax)
    await lax.waitForRecord((record) => record['event'] === 'listening', 20_000)
    // The queue and the worker both warn; serve says it once.
    const warnings = lax.records().filter((record) => record['level'] === 'warn' && record['event'] === 'warn')
    expect(warnings).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(
          /^serve runs with --durability best-effort on a Redis where it has appendonly no/,
        ),
      }),
    ])
  }, 30_000)

  it('exits 2 for a config it cannot use, naming the field and the fix, before it takes anything', async () => {
    const env = plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}` })
    const withConfig = (config: unknown) => {
      const file = join(folder, `bad-${++queues}.json`)
      writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config))
      return runCli(['serve', '--config', file, '--port', '0', '--name', `bad-${queues}`], env)
    }
    expect(await withConfig('{')).toMatchObject({ code: 2, stderr: expect.stringContaining('is not JSON') })
    expect(await withConfig({ sources: [{ id: 'shop', destinations: [] }] })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('`sources[0].writeKey`'),
    })
    // A write key that another source of the registry holds: said where it is in the file.
    const holder = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.server.port }, name: 'bad-taken' })
    open.push(holder)
    await holder.sources.set({ id: 'shop', writeKey: SHOP_KEY, destinations: [] })
    const file = join(folder, 'bad-taken.json')
    writeFileSync(file, JSON.stringify({ sources: [{ id: 'taken', writeKey: SHOP_KEY, destinations: [] }] }))
    expect(await runCli(['serve', '--config', file, '--port', '0', '--name', 'bad-taken'], env)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('sources[0].writeKey: source "shop" in the registry has this write key already'),
    })
    expect(await withConfig({ sources: [{ id: 'shop', writeKey: 'k', destinations: ['ghost'] }] })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('sources[0].destinations[0]: no destination "ghost" in the registry'),
    })
    expect(
      await withConfig({
        sources: [{ id: 'shop', writeKey: 'k', destinations: [] }],
        destinations: [{ id: 'acme', webhooks: [{ url: 'ftp://x' }] }],
      }),
    ).toMatchObject({ code: 2, stderr: expect.stringContaining('`destinations[0].webhooks[0].url`') })
  })
})
