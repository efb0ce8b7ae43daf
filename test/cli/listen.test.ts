import { createHmac } from 'node:crypto'
import { createServer } from 'node:net'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { afterEach, describe, expect, it } from 'vitest'
import { generateStandardSecret } from '../../src/webhook/index.js'
import { runCli, startCli, startListen, type CliProcess } from '../helpers/cli.js'

const running: CliProcess[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => cli.stop()))
})

async function listen(args: readonly string[] = []) {
  const started = await startListen(args)
  running.push(started.cli)
  return started
}

const body = JSON.stringify({
  version: 1,
  type: 'track',
  userId: 'u1',
  timestamp: '2026-01-01T00:00:00.000Z',
  context: {},
  event: 'Signed Up',
  properties: { plan: 'pro' },
})
const sign = (text: string, secret: string) => createHmac('sha1', secret).update(text).digest('hex')
const post = (url: string, headers: Record<string, string> = {}, text = body, init: RequestInit = {}) =>
  fetch(`${url}/hooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: text,
    ...init,
  })

describe('eventwire listen', () => {
  it('verifies X-Signature: 200 and "verified" for a good one, 401 and "forged" or "missing" otherwise', async () => {
    const { cli, url } = await listen(['--secret', 's3cret'])
    expect((await post(url, { 'x-signature': sign(body, 's3cret'), 'webhook-id': 'evt-1' })).status).toBe(200)
    const forged = await post(url, { 'x-signature': sign(body, 'guess') })
    expect(forged.status).toBe(401)
    expect(await forged.json()).toEqual({ error: 'X-Signature does not match the body and secret' })
    expect((await post(url)).status).toBe(401)
    const requests = await Promise.all(
      [1, 2, 3].map((count) =>
        cli.waitFor(() => cli.records().filter((record) => record['event'] === 'request').length >= count),
      ),
    )
    expect(requests).toHaveLength(3)
    const records = cli.records().filter((record) => record['event'] === 'request')
    expect(records[0]).toMatchObject({
      signature: 'verified',
      status: 200,
      webhookId: 'evt-1',
      path: '/hooks',
      payload: JSON.parse(body),
    })
    expect(records[1]).toMatchObject({ signature: 'forged', status: 401 })
    expect(records[2]).toMatchObject({ signature: 'missing', status: 401 })
  })

  it('verifies Standard Webhooks with a whsec_ secret: "verified", and "stale" (401) for a replay after 5 minutes', async () => {
    const secret = generateStandardSecret()
    const { cli, url } = await listen(['--secret', secret])
    const signer = new StandardWebhook(secret)
    const signed = (offsetSeconds: number) => {
      const at = new Date(Date.now() + offsetSeconds * 1000)
      return {
        'webhook-id': 'evt-1',
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signer.sign('evt-1', at, body),
      }
    }
    expect((await post(url, signed(0))).status).toBe(200)
    const stale = await post(url, signed(-400))
    expect(stale.status).toBe(401)
    expect(await stale.json()).toEqual({ error: 'webhook-timestamp is over 5 minutes off: a replay?' })
    const forged = await post(url, { ...signed(0), 'webhook-id': 'evt-2' })
    expect(forged.status).toBe(401)
    await cli.waitFor(() => cli.records().filter((record) => record['event'] === 'request').length >= 3)
    const marks = cli
      .records()
      .filter((record) => record['event'] === 'request')
      .map((record) => record['signature'])
    expect(marks).toEqual(['verified', 'stale', 'forged'])
  })

  it('verifies the bytes received, not a re-encoded string (a body with invalid UTF-8 still verifies)', async () => {
    const { cli, url } = await listen(['--secret', 's3cret'])
    const raw = Buffer.concat([
      Buffer.from('{"type":"track","userId":"u'),
      Buffer.from([0xff]),
      Buffer.from('","event":"E"}'),
    ])
    const signature = createHmac('sha1', 's3cret').update(raw).digest('hex')
    const response = await fetch(`${url}/hooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': signature },
      body: raw,
    })
    expect(response.status).toBe(200)
    expect(await cli.waitForRecord((record) => record['event'] === 'request')).toMatchObject({
      signature: 'verified',
      payload: { userId: 'u\ufffd' },
    })
  })

  it('without --secret accepts every JSON body and marks it unchecked', async () => {
    const { cli, url } = await listen()
    expect((await post(url, { 'x-signature': 'anything' })).status).toBe(200)
    expect((await post(url, {}, 'not json')).status).toBe(400)
    const [first, second] = await Promise.all([
      cli.waitForRecord((record) => record['event'] === 'request' && record['status'] === 200),
      cli.waitForRecord((record) => record['event'] === 'request' && record['status'] === 400),
    ])
    expect(first).toMatchObject({ signature: 'unchecked' })
    expect(second).toMatchObject({ reason: 'the body is not JSON' })
  })

  it('--fail-rate 1 answers every valid request 500', async () => {
    const { cli, url } = await listen(['--secret', 's', '--fail-rate', '1'])
    const response = await post(url, { 'x-signature': sign(body, 's') })
    expect(response.status).toBe(500)
    expect(await cli.waitForRecord((record) => record['event'] === 'request')).toMatchObject({
      signature: 'verified',
      status: 500,
      reason: 'failed on purpose (--fail-rate)',
    })
  })

  it('--delay holds the answer, and notes a sender that hung up first', async () => {
    const { cli, url } = await listen(['--delay', '400'])
    const started = Date.now()
    expect((await post(url)).status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(390)
    await expect(post(url, {}, body, { signal: AbortSignal.timeout(100) })).rejects.toThrow()
    expect(await cli.waitForRecord((record) => record['senderHungUp'] === true)).toMatchObject({ status: 200 })
  })

  it('pretty-prints each event with its mark, and a summary when stopped', async () => {
    const cli = await startCli(['listen', '--port', '0', '--secret', 's3cret'])
    const banner = await cli.waitFor((line) => line.startsWith('eventwire listen: receiving webhooks on'))
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(banner)![0]
    await post(url, { 'x-signature': sign(body, 's3cret') })
    await post(url, { 'x-signature': sign(body, 'nope') })
    const alias = JSON.stringify({
      version: 1,
      type: 'alias',
      timestamp: '2026-01-01T00:00:00.000Z',
      context: {},
      'Previous ID': 'anon-1',
      'User ID': 'u1',
    })
    await post(url, { 'x-signature': sign(alias, 's3cret') }, alias)
    await cli.waitFor((line) => line.includes('anon-1 → u1'))
    expect(await cli.stop()).toBe(0)
    const output = cli.lines.join('\n')
    expect(output).toMatch(/\d\d:\d\d:\d\d\.\d{3} ✔ verified track +"Signed Up" by u1\n +\{"plan":"pro"\}/)
    expect(output).toMatch(/✘ forged +track +"Signed Up" by u1 → 401 X-Signature does not match/)
    expect(output).toMatch(/✔ verified alias +anon-1 → u1/)
    expect(cli.lines.at(-1)).toBe(
      'eventwire listen: received 3 request(s): 2 verified, 1 forged; answered 2×200, 1×401',
    )
  })

  it('exits 2 on a bad option and 1 when the port is taken', async () => {
    const bad = await runCli(['listen', '--fail-rate', '2'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('expected a number from 0 to 1')
    // A timer longer than 2^31 - 1 ms would fire at once: the delay would silently be none.
    const tooLong = await runCli(['listen', '--delay', '99999999999'])
    expect(tooLong.code).toBe(2)
    expect(tooLong.stderr).toContain('expected at most 2147483647 ms')
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const { port } = taken.address() as { port: number }
    const busy = await runCli(['listen', '--port', String(port)])
    taken.close()
    expect(busy.code).toBe(1)
    expect(busy.stderr).toContain('EADDRINUSE')
  })
})
