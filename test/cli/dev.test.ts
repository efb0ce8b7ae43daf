import { spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '../../src/index.js'
import { CLI_BUNDLE, plainEnv, postBatch, runCli, startCli, startDev, type CliProcess } from '../helpers/cli.js'
import { startHostileReceiver } from '../helpers/hostile-receiver.js'
import { startSink, type Responder, type Sink } from '../helpers/sink.js'

const running: CliProcess[] = []
const sinks: Sink[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => cli.stop()))
  await Promise.all(sinks.splice(0).map((sink) => sink.close()))
})

async function receiver(respond?: Responder): Promise<Sink> {
  const sink = await startSink(respond)
  sinks.push(sink)
  return sink
}

async function dev(args: readonly string[]) {
  const started = await startDev(args)
  running.push(started.cli)
  return started
}

const settled = (cli: CliProcess, count: number) =>
  cli.waitFor(
    () =>
      cli
        .records()
        .filter((record) => ['delivered', 'failed', 'skipped', 'unroutable'].includes(String(record['event'])))
        .length >= count,
  )

describe('eventwire dev', () => {
  it("takes the client's batches and delivers each event as a signed webhook with the given headers", async () => {
    const hook = await receiver()
    const { cli, url } = await dev([
      '--write-key',
      'wk',
      '--secret',
      's3cret',
      '--webhook',
      `${hook.url}/in`,
      '--header',
      'X-Team: data',
    ])
    const client = new Client('wk', { endpoint: url })
    client.identify({ userId: 'u1', traits: { plan: 'pro' }, messageId: 'm-1' })
    client.track({ userId: 'u1', event: 'Signed Up', properties: { source: 'ad' }, messageId: 'm-2' })
    client.alias({ previousId: 'anon-1', userId: 'u1', messageId: 'm-3' })
    await client.close()
    await settled(cli, 3)
    expect(hook.requests).toHaveLength(3)
    const byId = Object.fromEntries(hook.requests.map((request) => [request.headers['webhook-id'], request]))
    for (const request of hook.requests) {
      expect(request.path).toBe('/in')
      expect(request.headers['x-team']).toBe('data')
      expect(request.headers['x-signature']).toBe(createHmac('sha1', 's3cret').update(request.raw).digest('hex'))
    }
    expect(JSON.parse(byId['m-1']!.body)).toMatchObject({
      version: 1,
      type: 'identify',
      userId: 'u1',
      traits: { plan: 'pro' },
    })
    expect(JSON.parse(byId['m-2']!.body)).toMatchObject({
      type: 'track',
      event: 'Signed Up',
      properties: { source: 'ad' },
    })
    expect(JSON.parse(byId['m-3']!.body)).toMatchObject({ type: 'alias', 'Previous ID': 'anon-1', 'User ID': 'u1' })
    const delivered = cli.records().filter((record) => record['event'] === 'delivered')
    expect(delivered.map((record) => record['eventId']).sort()).toEqual(['m-1', 'm-2', 'm-3'])
    expect(delivered[0]).toMatchObject({
      urls: [{ url: `${hook.url}/in`, status: 'delivered', attempts: 1, lastStatus: 200 }],
    })
  })

  it('takes gzip bodies (Content-Encoding: gzip), refuses a gzip bomb with 413 without inflating it, and other encodings', async () => {
    const { cli, url } = await startDev(['--write-key', 'k'])
    running.push(cli)
    const post = (body: Buffer | string, encoding: string) =>
      fetch(`${url}/v1/batch`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-encoding': encoding,
          authorization: `Basic ${Buffer.from('k:').toString('base64')}`,
        },
        body: typeof body === 'string' ? body : new Uint8Array(body),
      })
    const batch = JSON.stringify({ batch: [{ type: 'track', userId: 'u1', event: 'Zipped', messageId: 'z-1' }] })
    const accepted = await post(gzipSync(batch), 'gzip')
    expect(accepted.status).toBe(200)
    expect(await cli.waitForRecord((record) => record['event'] === 'received')).toMatchObject({ eventId: 'z-1' })
    // 20 MB of JSON in about 20 KB of gzip: refused once 500,000 bytes are out, not inflated.
    const bomb = gzipSync(`{"batch":[{"type":"track","userId":"u1","event":"${'x'.repeat(20_000_000)}"}]}`)
    expect(bomb.length).toBeLessThan(100_000)
    const refused = await post(bomb, 'gzip')
    expect(refused.status).toBe(413)
    expect(await refused.json()).toMatchObject({ code: 'ERR_BODY_TOO_LARGE' })
    // Stored (level 0) gzip of JSON just under the limit is a little over it on the wire: taken.
    const padded = JSON.stringify({
      batch: [{ type: 'track', userId: 'u1', event: 'Stored', properties: { pad: 'p'.repeat(31_000) } }],
    })
    expect((await post(gzipSync(padded.padEnd(499_990, ' '), { level: 0 }), 'gzip')).status).toBe(200)
    const notGzip = await post(batch, 'gzip')
    expect(notGzip.status).toBe(400)
    expect(await notGzip.json()).toMatchObject({ code: 'ERR_ENCODING' })
    const brotli = await post(batch, 'br')
    expect(brotli.status).toBe(415)
    expect(await brotli.json()).toMatchObject({ code: 'ERR_ENCODING' })
    // No encoding, said or not: the 500,000-byte limit on the body itself, as without the header.
    const over = padded.padEnd(500_001, ' ')
    for (const encoding of ['identity', '']) expect((await post(over, encoding)).status).toBe(413)
    expect((await post(padded.padEnd(500_000, ' '), 'identity')).status).toBe(200)
  })

  it('refuses requests without the write key (401), on other paths (404) and with other methods (405)', async () => {
    const hook = await receiver()
    const { cli, url, writeKey } = await dev(['--webhook', hook.url])
    expect(writeKey).toMatch(/^wk_dev_[0-9a-f]{24}$/)
    const batch = { batch: [{ type: 'track', userId: 'u1', event: 'E' }] }
    const noKey = await postBatch(url, undefined, batch)
    expect(noKey.status).toBe(401)
    expect(await noKey.json()).toMatchObject({ success: false, code: 'ERR_UNAUTHORIZED' })
    const wrongKey = await postBatch(url, 'wrong', batch)
    expect(wrongKey.status).toBe(401)
    expect(await wrongKey.json()).toMatchObject({
      code: 'ERR_UNAUTHORIZED',
      error: expect.stringMatching(/^that write key is not this server's/),
    })
    expect((await postBatch(url, writeKey, batch, '/v1/nothing')).status).toBe(404)
    expect((await fetch(`${url}/v1/batch`)).status).toBe(405)
    await cli.waitFor(() => cli.records().filter((record) => record['event'] === 'rejected').length === 4)
    expect(hook.requests).toHaveLength(0)
  })

  it("checks batches with the client's rules: one bad message refuses the batch with a 400 that says why", async () => {
    const hook = await receiver()
    const { cli, url, writeKey } = await dev(['--webhook', hook.url])
    const cases: Array<[unknown, number, string, string]> = [
      [
        {
          batch: [
            { type: 'track', userId: 'u1', event: 'Fine' },
            { type: 'track', userId: 'u1' },
          ],
        },
        400,
        'ERR_MISSING_EVENT',
        'batch[1]: track() needs a non-empty `event`.',
      ],
      [
        { batch: [{ type: 'identify', traits: {} }] },
        400,
        'ERR_MISSING_IDENTITY',
        'batch[0]: identify() needs a `userId` or an `anonymousId`',
      ],
      [
        { batch: [{ type: 'alias', userId: 'u1' }] },
        400,
        'ERR_MISSING_PREVIOUS_ID',
        'batch[0]: alias() needs a non-empty `previousId`.',
      ],
      [{ batch: [{ type: 'group', userId: 'u1' }] }, 400, 'ERR_MISSING_GROUP_ID', 'batch[0]'],
      [
        { batch: [{ type: 'track', userId: 'u1', event: 'E', properties: 'x' }] },
        400,
        'ERR_INVALID_FIELD',
        '`properties` must be a plain object',
      ],
      // The webhook engine sends the messageId as the Webhook-Id header: one no header can carry is refused here.
      [
        { batch: [{ type: 'track', userId: 'u1', event: 'E', messageId: 'évènement' }] },
        400,
        'ERR_INVALID_FIELD',
        'batch[0]: track(): `messageId`',
      ],
      [
        { batch: [{ type: 'track', userId: 'u1', event: 'E', messageId: 'm1\r\nX-Injected: 1' }] },
        400,
        'ERR_INVALID_FIELD',
        'not "\\r" (at 3)',
      ],
      [
        { batch: [{ type: 'delete', userId: 'u1' }] },
        400,
        'ERR_BAD_BATCH',
        '`type` must be one of identify, track, page, screen, group, alias; got "delete"',
      ],
      [{ batch: [] }, 400, 'ERR_BAD_BATCH', '`batch` is empty.'],
      [{ messages: [] }, 400, 'ERR_BAD_BATCH', 'a `batch` array'],
      ['{"batch": [', 400, 'ERR_NOT_JSON', 'the body is not JSON'],
      [
        { batch: [{ type: 'track', userId: 'u1', event: 'E', properties: { blob: 'x'.repeat(32_000) } }] },
        400,
        'ERR_MESSAGE_TOO_LARGE',
        'the limit is 32000',
      ],
      [
        {
          batch: Array.from({ length: 30 }, () => ({
            type: 'track',
            userId: 'u1',
            event: 'E',
            properties: { blob: 'x'.repeat(20_000) },
          })),
        },
        413,
        'ERR_BODY_TOO_LARGE',
        'at most 500000 bytes',
      ],
    ]
    for (const [body, status, code, reason] of cases) {
      const response = await postBatch(url, writeKey, body)
      expect(response.status, code).toBe(status)
      const answer = (await response.json()) as { success: boolean; code: string; error: string }
      expect(answer).toMatchObject({ success: false, code })
      expect(answer.error).toContain(reason)
    }
    await cli.waitFor(() => cli.records().filter((record) => record['event'] === 'rejected').length === cases.length)
    expect(cli.records().find((record) => record['event'] === 'rejected')).toMatchObject({
      status: 400,
      code: 'ERR_MISSING_EVENT',
    })
    expect(hook.requests).toHaveLength(0)
  })

  it('honours integrations (message and batch level), applies batch context, and reports events a webhook cannot carry', async () => {
    const hook = await receiver()
    const { cli, url, writeKey } = await dev(['--webhook', hook.url])
    const response = await postBatch(url, writeKey, {
      context: { ip: '10.0.0.1', app: 'batch' },
      batch: [
        { type: 'track', userId: 'u1', event: 'Off', messageId: 'off', integrations: { Webhooks: false } },
        { type: 'track', userId: 'u1', event: 'All off', messageId: 'all-off', integrations: { All: false } },
        {
          type: 'track',
          userId: 'u1',
          event: 'Back on',
          messageId: 'on',
          integrations: { All: false, Webhooks: true },
          context: { app: 'message' },
        },
        { type: 'track', anonymousId: 'a1', event: 'Anonymous', messageId: 'anon' },
      ],
    })
    expect(response.status).toBe(200)
    await settled(cli, 4)
    expect(hook.requests.map((request) => request.headers['webhook-id'])).toEqual(['on'])
    expect(JSON.parse(hook.requests[0]!.body)).toMatchObject({ context: { ip: '10.0.0.1', app: 'message' } })
    const byId = Object.fromEntries(
      cli
        .records()
        .filter((record) => 'eventId' in record)
        .map((record) => [record['eventId'], record]),
    )
    expect(byId['off']).toMatchObject({ event: 'skipped' })
    expect(byId['all-off']).toMatchObject({ event: 'skipped' })
    expect(byId['on']).toMatchObject({ event: 'delivered' })
    expect(byId['anon']).toMatchObject({ event: 'unroutable', type: 'track', userId: 'a1' })
    expect(byId['anon']!['reason']).toBe(
      'a webhook carries the userId and this event has none (an anonymousId is not forwarded); give the call a userId to see it at the receiver',
    )

    const batch = await postBatch(url, writeKey, {
      integrations: { Webhooks: false },
      batch: [{ type: 'track', userId: 'u1', event: 'E', messageId: 'batch-off' }],
    })
    expect(batch.status).toBe(200)
    expect(await cli.waitForRecord((record) => record['eventId'] === 'batch-off')).toMatchObject({ event: 'skipped' })
  })

  it('reports retries as they are scheduled, and on stop the events still waiting as failed', async () => {
    const hook = await receiver(() => ({ status: 503 }))
    const hookUrl = `${hook.url}/`
    const { cli, url, writeKey } = await dev(['--webhook', hook.url])
    await postBatch(url, writeKey, { batch: [{ type: 'track', userId: 'u1', event: 'E', messageId: 'm-r' }] })
    const retry = await cli.waitForRecord((record) => record['event'] === 'retry')
    expect(retry).toMatchObject({ eventId: 'm-r', url: hookUrl, attempts: 1, error: 'ERR_HTTP_STATUS', status: 503 })
    // The first retry is 5 s (±10%) after the first attempt.
    expect(Date.parse(String(retry['retryAt'])) - Date.now()).toBeGreaterThan(3_000)
    running.splice(running.indexOf(cli), 1)
    expect(await cli.stop('SIGTERM')).toBe(0)
    const records = cli.records()
    expect(records.find((record) => record['event'] === 'failed')).toMatchObject({
      eventId: 'm-r',
      urls: [{ status: 'failed', lastStatus: 503, error: 'ERR_CLOSED' }],
    })
    expect(records.at(-1)).toMatchObject({ event: 'stopped', batches: 1, received: 1, delivered: 0, failed: 1 })
  })

  it('in mode any stops at the first URL that accepts; in mode each retries every URL until it does', async () => {
    const up = await receiver()
    const down = await receiver(() => ({ status: 500 }))
    const any = await dev(['--webhook', up.url, '--webhook', down.url])
    const each = await dev(['--webhook', up.url, '--webhook', down.url, '--mode', 'each'])
    await postBatch(any.url, any.writeKey, { batch: [{ type: 'track', userId: 'u1', event: 'E', messageId: 'any' }] })
    await postBatch(each.url, each.writeKey, {
      batch: [{ type: 'track', userId: 'u1', event: 'E', messageId: 'each' }],
    })
    expect(
      await any.cli.waitForRecord((record) => record['eventId'] === 'any' && record['event'] === 'delivered'),
    ).toMatchObject({ urls: [{ status: 'delivered' }, { status: 'superseded' }] })
    expect(await each.cli.waitForRecord((record) => record['event'] === 'retry')).toMatchObject({
      eventId: 'each',
      url: `${down.url}/`,
      status: 500,
    })
    // Each URL on its own timeline: a retry of the failing URL may have been told before the other
    // accepted; it is cancelled then. The each-mode retry above came later than any such: none was sent.
    const anyRequests = down.requests.filter((request) => request.headers['webhook-id'] === 'any')
    expect(anyRequests.length).toBeLessThanOrEqual(1)
  })

  it('writes plain log lines when stdout is not a terminal', async () => {
    const hook = await receiver()
    const cli = await startCli(['dev', '--port', '0', '--webhook', hook.url, '--write-key', 'wk'])
    running.push(cli)
    const banner = await cli.waitFor((line) => line.startsWith('eventwire dev: ingest API on'))
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(banner)![0]
    expect(cli.lines).toContain('  write key  wk  (eventwire send --write-key, or EVENTWIRE_WRITE_KEY)')
    await postBatch(url, 'wk', { batch: [{ type: 'track', userId: 'u1', event: 'Signed Up' }] })
    await postBatch(url, 'wk', { batch: [{ type: 'track', userId: 'u1' }] })
    await cli.waitFor((line) => line.includes('delivered:'))
    await cli.waitFor((line) => line.includes('refused'))
    const output = cli.lines.join('\n')
    expect(output).toMatch(/\d\d:\d\d:\d\d\.\d{3} ← batch of 1 event\(s\), \d+ bytes/)
    expect(output).toContain(`✔ track "Signed Up" (u1) delivered: ${hook.url}/ 200`)
    expect(output).toContain('✘ refused 400 ERR_MISSING_EVENT: batch[0]: track() needs a non-empty `event`.')
  })

  it('exits 2 for settings the destination refuses, and for a --cors-origin that is not an origin', async () => {
    const six = Array.from({ length: 6 }, (_, index) => ['--webhook', `http://127.0.0.1:${9000 + index}`]).flat()
    const cases = await Promise.all([
      runCli(['dev', '--port', '0', ...six]),
      runCli(['dev', '--port', '0', '--cors-origin', 'http://localhost:5173/']),
      runCli(['dev', '--port', '0', '--webhook', 'not a url']),
      runCli(['dev', '--port', '0', '--webhook', 'http://127.0.0.1:9000', '--header', 'Bad Name: x']),
      runCli(['dev', '--port', '0', '--webhook', 'http://127.0.0.1:9000', '--mode', 'all']),
      runCli(['dev', '--port', '0', '--cors-origin', 'localhost']),
    ])
    expect(cases.map((run) => run.code)).toEqual([2, 2, 2, 2, 2, 2])
    expect(cases[0]!.stderr).toContain('webhooks')
    expect(cases[1]!.stderr).toContain('without path or trailing slash (http://localhost:5173)')
    expect(cases[3]!.stderr).toContain('header')
    expect(cases[5]!.stderr).toContain('expected * or an origin')
  })

  it('prints no password from a --webhook URL it refuses, well-formed or not', async () => {
    const cases = await Promise.all([
      runCli(['dev', '--port', '0', '--webhook', 'http://user:s3cret@127.0.0.1:9000']),
      runCli(['dev', '--port', '0', '--webhook', 'http://user:s3cret@127.0.0.1:99999']),
      runCli(['dev', '--port', '0', '--webhook', 'user:s3cret@127.0.0.1']),
    ])
    expect(cases.map((run) => run.code)).toEqual([2, 2, 2])
    for (const run of cases) expect(`${run.stdout}${run.stderr}`).not.toContain('s3cret')
  })

  it('stops on SIGTERM although a receiver answered and then trickles its body', async () => {
    // Before attempts had a deadline for the body too, dev kept running 30 s after SIGTERM here.
    const trickling = await startHostileReceiver('slow-body')
    try {
      const { cli, url, writeKey } = await dev(['--webhook', trickling.url])
      await postBatch(url, writeKey, { batch: [{ type: 'track', userId: 'u1', event: 'E' }] })
      await trickling.received(1)
      expect(await cli.stop('SIGTERM')).toBe(0)
      expect(cli.records().at(-1)).toMatchObject({ event: 'stopped' })
    } finally {
      await trickling.close()
    }
  })
})

describe('eventwire dev with its output piped to a reader that goes away', () => {
  it('stops quietly (exit 0, no stack trace) when the reader closes, as `eventwire dev | head -1` does', async () => {
    const child = spawn(process.execPath, [CLI_BUNDLE, 'dev', '--port', '0', '--json', '--write-key', 'k'], {
      env: plainEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve))
    // The first line says where it listens; then the reader goes away, as head does.
    const first = await new Promise<string>((resolve) =>
      child.stdout.once('data', (chunk: Buffer) => resolve(String(chunk))),
    )
    child.stdout.destroy()
    const { url } = JSON.parse(first.split('\n')[0] as string) as { url: string }
    // The next record written hits the closed pipe.
    await postBatch(url, 'k', { batch: [{ type: 'track', userId: 'u1', event: 'E' }] }).catch(() => undefined)
    expect(await exited).toBe(0)
    expect(stderr).toBe('')
  })
})
