import { afterEach, describe, expect, it } from 'vitest'
import { plainEnv, runCli, sendTrackArgs } from '../helpers/cli.js'
import { startSink, type Sink } from '../helpers/sink.js'

let sink: Sink | undefined
afterEach(async () => {
  await sink?.close()
  sink = undefined
})

const batchOf = (sink: Sink, index = 0) =>
  (JSON.parse(sink.requests[index]!.body) as { batch: Array<Record<string, unknown>> }).batch

describe('eventwire send', () => {
  it('sends the call through the client: POST /v1/batch, basic auth, fields from the command line', async () => {
    sink = await startSink()
    const { code, stdout } = await runCli([
      'send',
      'track',
      '--endpoint',
      sink.url,
      '--write-key',
      'k1',
      '--user',
      'u1',
      '--event',
      'Signed Up',
      '--prop',
      'plan=pro',
      '--prop',
      'seats:=3',
      '--prop',
      'trial:=false',
      '--context',
      'ip=10.0.0.1',
    ])
    expect(code).toBe(0)
    expect(sink.requests).toHaveLength(1)
    const [request] = sink.requests
    expect(request!.path).toBe('/v1/batch')
    expect(request!.headers.authorization).toBe(`Basic ${Buffer.from('k1:').toString('base64')}`)
    const [message] = batchOf(sink)
    expect(message).toMatchObject({
      type: 'track',
      userId: 'u1',
      event: 'Signed Up',
      properties: { plan: 'pro', seats: 3, trial: false },
      context: { ip: '10.0.0.1' },
    })
    expect(stdout).toContain(`✔ track ${String(message!['messageId'])} sent to ${sink.url} (HTTP 200)`)
  })

  it('puts each option where its type keeps it', async () => {
    sink = await startSink()
    const common = ['--endpoint', sink.url, '--write-key', 'k', '--user', 'u1']
    const runs = await Promise.all([
      runCli([
        'send',
        'identify',
        ...common,
        '--trait',
        'email=a@b.c',
        '--integration',
        'All=false',
        '--integration',
        'Webhooks=true',
      ]),
      runCli(['send', 'page', ...common, '--name', 'Pricing', '--category', 'Docs', '--prop', 'path=/pricing']),
      runCli(['send', 'screen', ...common, '--name', 'Home']),
      runCli(['send', 'group', ...common, '--group', 'acme', '--trait', 'size:=20']),
      runCli(['send', 'alias', ...common, '--previous', 'anon-1']),
      runCli([
        'send',
        'track',
        '--endpoint',
        sink.url,
        '--write-key',
        'k',
        '--anonymous',
        'a1',
        '--event',
        'E',
        '--message-id',
        'm-1',
        '--timestamp',
        '2026-01-02T03:04:05.000Z',
      ]),
    ])
    expect(runs.map((run) => run.code)).toEqual([0, 0, 0, 0, 0, 0])
    const messages = sink.requests.map((_, index) => batchOf(sink!, index)[0]!)
    const byType = Object.fromEntries(messages.map((message) => [message['type'], message]))
    expect(byType['identify']).toMatchObject({
      traits: { email: 'a@b.c' },
      integrations: { All: false, Webhooks: true },
    })
    expect(byType['page']).toMatchObject({ name: 'Pricing', category: 'Docs', properties: { path: '/pricing' } })
    expect(byType['screen']).toMatchObject({ name: 'Home' })
    expect(byType['group']).toMatchObject({ groupId: 'acme', traits: { size: 20 } })
    expect(byType['alias']).toMatchObject({ userId: 'u1', previousId: 'anon-1' })
    expect(byType['track']).toMatchObject({
      anonymousId: 'a1',
      event: 'E',
      messageId: 'm-1',
      timestamp: '2026-01-02T03:04:05.000Z',
    })
  })

  it('prints one JSON object with --json, and takes the endpoint and key from the environment', async () => {
    sink = await startSink()
    const { code, stdout } = await runCli(
      ['send', 'track', '--user', 'u1', '--event', 'E', '--message-id', 'm-7', '--json'],
      plainEnv({ EVENTWIRE_ENDPOINT: sink.url, EVENTWIRE_WRITE_KEY: 'from-env' }),
    )
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual({ ok: true, type: 'track', messageId: 'm-7', endpoint: sink.url, status: 200 })
    expect(sink.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from('from-env:').toString('base64')}`)
  })

  it('exits 1 when the endpoint refuses the call, with the client error code', async () => {
    sink = await startSink(() => ({ status: 401 }))
    const human = await runCli(sendTrackArgs(sink.url, 'wrong'))
    expect(human.code).toBe(1)
    expect(human.stderr).toMatch(/✘ track not sent: .*HTTP 401.*\[ERR_REJECTED\]/)
    const json = await runCli(sendTrackArgs(sink.url, 'wrong', '--json'))
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: 'ERR_REJECTED', status: 401 })
  })

  it('exits 2 for an endpoint with a user name and password, printing neither, with or without --json', async () => {
    const endpoint = [
      '--endpoint',
      'http://user:s3cret@127.0.0.1:9',
      '--write-key',
      'k',
      '--user',
      'u1',
      '--event',
      'E',
    ]
    for (const result of await Promise.all([
      runCli(['send', 'track', ...endpoint]),
      runCli(['send', 'track', ...endpoint, '--json']),
    ])) {
      expect(result.code).toBe(2)
      expect(result.stderr).toContain('Invalid option `endpoint`')
      expect(`${result.stdout}${result.stderr}`).not.toContain('s3cret')
    }
  })

  it('prints no password from a malformed URL, whatever refuses it', async () => {
    const result = await runCli(sendTrackArgs('http://user:s3cret@127.0.0.1:99999', 'k'))
    expect(result.code).toBe(2)
    expect(`${result.stdout}${result.stderr}`).not.toContain('s3cret')
  })

  it('exits 1 after its retries when nothing listens', async () => {
    const { code, stdout } = await runCli(sendTrackArgs('http://127.0.0.1:9', 'k', '--retries', '1', '--json'))
    expect(code).toBe(1)
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, code: 'ERR_RETRIES_EXHAUSTED' })
  })

  it('exits 2 without sending for a message the client refuses or a wrong command line', async () => {
    sink = await startSink()
    const endpoint = ['--endpoint', sink.url, '--write-key', 'k']
    const missingEvent = await runCli(['send', 'track', ...endpoint, '--user', 'u1', '--json'])
    expect(missingEvent.code).toBe(2)
    expect(JSON.parse(missingEvent.stdout)).toMatchObject({ ok: false, code: 'ERR_MISSING_EVENT' })
    const cases = await Promise.all([
      runCli(['send', 'trak', ...endpoint, '--user', 'u1']),
      runCli(['send', 'track', ...endpoint, '--user', 'u1', '--event', 'E', '--prop', 'novalue']),
      runCli(['send', 'track', ...endpoint, '--user', 'u1', '--event', 'E', '--prop', 'n:={bad']),
      runCli(['send', 'track', ...endpoint, '--user', 'u1', '--event', 'E', '--trait', 'a=b']),
      runCli(['send', 'track', ...endpoint, '--user', 'u1', '--event', 'E', '--integration', 'Webhooks=maybe']),
      runCli(['send', 'track', '--endpoint', sink.url, '--user', 'u1', '--event', 'E']),
      runCli(['send', 'identify', ...endpoint]),
      runCli(['send', 'track', '--endpoint', 'ftp://x', '--write-key', 'k', '--user', 'u1', '--event', 'E']),
      runCli(['send', 'track', ...endpoint, '--user', 'u1', '--event', 'E', '-p', 'big:=12345678901234567890123']),
    ])
    expect(cases.map((run) => run.code)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2])
    expect(cases[0]!.stderr).toContain('Allowed choices are identify, track, page, screen, group, alias')
    expect(cases[1]!.stderr).toContain('expected key=value')
    expect(cases[2]!.stderr).toContain('is not JSON')
    expect(cases[3]!.stderr).toContain('track has no use for --trait')
    expect(cases[4]!.stderr).toContain('Name=true or Name=false')
    expect(cases[5]!.stderr).toContain('a write key is needed')
    expect(cases[6]!.stderr).toContain('[ERR_MISSING_IDENTITY]')
    expect(cases[7]!.stderr).toContain('endpoint')
    expect(cases[8]!.stderr).toContain(
      'has the number 12345678901234567890123, which a JavaScript number cannot hold exactly',
    )
    expect(cases[8]!.stderr).toContain('Send it as a string: big=12345678901234567890123.')
    expect(sink.requests).toHaveLength(0)
  })

  it('documents itself: --help exits 0, --version prints the package version', async () => {
    const help = await runCli(['send', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('--prop <key=value>')
    expect(help.stdout).toContain('Exit codes: 0 sent, 1 not delivered, 2 bad command line or message.')
    const version = await runCli(['--version'])
    expect(version).toMatchObject({ code: 0, stdout: '0.1.0' })
    const bare = await runCli([])
    expect(bare.code).toBe(2)
    expect(bare.stderr).toContain('Commands:')
  })
})
