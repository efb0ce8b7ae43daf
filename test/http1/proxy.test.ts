import { afterEach, describe, expect, it, vi } from 'vitest'
import { OptionsError } from '../../src/core/errors/options-error.js'
import { proxyAddress, proxyRule } from '../../src/http1/proxy.js'
import { openTunnel } from '../../src/http1/tunnel.js'
import { WebhookDestination } from '../../src/webhook/index.js'
import { createHttp1Transport } from '../../src/webhook/network/http1-transport.js'
import type { WebhookResponse } from '../../src/webhook/network/transport.js'
import { certificates } from '../helpers/certs.js'
import { type ProxyBehaviour, startConnectProxy, type TestProxy } from '../helpers/connect-proxy.js'
import { startSink, type Sink } from '../helpers/sink.js'
import { requestTo } from '../helpers/webhook-request.js'

const opened: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((server) => server.close()))
})

/** A CONNECT proxy of test/helpers/connect-proxy.ts, closed after the test. */
async function startProxy(behaviour: ProxyBehaviour, tls?: { key: string; cert: string }): Promise<TestProxy> {
  const proxy = await startConnectProxy(behaviour, tls)
  opened.push(proxy)
  return proxy
}

async function sink(...args: Parameters<typeof startSink>): Promise<Sink> {
  const started = await startSink(...args)
  opened.push(started)
  return started
}

const failureOf = (response: WebhookResponse) => (response.ok ? undefined : response.failure)
const causeOf = (response: WebhookResponse) => String(response.ok ? '' : (response.cause as Error).message)

describe('createHttp1Transport({ proxy }): an HTTP CONNECT tunnel', () => {
  it('sends an http: request through the tunnel: the proxy sees only CONNECT to the host and port', async () => {
    const receiver = await sink()
    const proxy = await startProxy({ kind: 'tunnel' })
    const transport = createHttp1Transport({ proxy: proxy.url })
    const { port } = new URL(receiver.url)
    expect(await transport.send(requestTo(`${receiver.url}/in`))).toMatchObject({ ok: true, status: 200 })
    // A second request reuses the tunnel's connection: one CONNECT.
    expect(await transport.send(requestTo(`${receiver.url}/in`))).toMatchObject({ ok: true, status: 200 })
    await transport.close?.()
    expect(proxy.connects).toEqual([{ authority: `127.0.0.1:${port}`, authorization: undefined }])
    expect(receiver.requests.map((request) => request.path)).toEqual(['/in', '/in'])
    expect(receiver.connections().opened).toBe(1)
  })

  it('runs TLS to an https: receiver inside the tunnel, and checks the receiver’s name there', async () => {
    const trusted = await sink(() => ({ status: 204 }), { tls: certificates.selfSigned })
    const wrongName = await sink(() => ({ status: 204 }), { tls: certificates.wrongHost })
    const proxy = await startProxy({ kind: 'tunnel' })
    const transport = createHttp1Transport({
      proxy: proxy.url,
      tls: { ca: [certificates.selfSigned.cert, certificates.ca] },
    })
    const localhost = trusted.url.replace('127.0.0.1', 'localhost')
    expect(await transport.send(requestTo(`${localhost}/in`))).toMatchObject({ ok: true, status: 204 })
    expect(await transport.send(requestTo(`${trusted.url}/in`))).toMatchObject({ ok: true, status: 204 })
    const refused = await transport.send(requestTo(`${wrongName.url}/in`))
    await transport.close?.()
    // The CA is trusted; the certificate is for wrong.invalid, not 127.0.0.1: refused inside the tunnel.
    expect(failureOf(refused)).toBe('tls')
    expect(wrongName.requests).toHaveLength(0)
    expect(trusted.requests).toHaveLength(2)
    expect(proxy.connects.map((connect) => connect.authority)).toEqual([
      `localhost:${new URL(trusted.url).port}`,
      `127.0.0.1:${new URL(trusted.url).port}`,
      `127.0.0.1:${new URL(wrongName.url).port}`,
    ])
  })

  it('sends the URL’s user name and password as Proxy-Authorization, decoded', async () => {
    const receiver = await sink()
    const proxy = await startProxy({ kind: 'tunnel', password: 'p@ss:w/rd' })
    const { port } = new URL(proxy.url)
    const right = createHttp1Transport({ proxy: `http://user:${encodeURIComponent('p@ss:w/rd')}@127.0.0.1:${port}` })
    const wrong = createHttp1Transport({ proxy: `http://user:nope@127.0.0.1:${port}` })
    expect(await right.send(requestTo(`${receiver.url}/in`))).toMatchObject({ ok: true, status: 200 })
    const refused = await wrong.send(requestTo(`${receiver.url}/in`))
    // A proxy that echoes the credentials it was given in its refusal: they do not reach a message.
    const echoing = await startProxy({ kind: 'raw', answer: `HTTP/1.1 403 ${btoa('user:nope')}\r\n\r\n` })
    const echoed = createHttp1Transport({ proxy: `http://user:nope@127.0.0.1:${new URL(echoing.url).port}` })
    const hidden = await echoed.send(requestTo(`${receiver.url}/in`))
    await echoed.close?.()
    expect(causeOf(hidden)).toContain('with 403 ***')
    expect(causeOf(hidden)).not.toContain(btoa('user:nope'))
    await Promise.all([right.close?.(), wrong.close?.()])
    expect(failureOf(refused)).toBe('proxy')
    expect(causeOf(refused)).toContain('with 407')
    expect(causeOf(refused)).toContain('give them in the proxy URL')
    // The credentials are never in a message.
    expect(causeOf(refused)).not.toContain('nope')
    expect(receiver.requests).toHaveLength(1)
  })

  it.each<[string, ProxyBehaviour, RegExp]>([
    ['a 403', { kind: 'refuse', status: 403 }, /with 403 Nope: it does not allow this target/],
    ['a 502', { kind: 'refuse', status: 502 }, /with 502 Nope/],
    ['an answer that is not HTTP', { kind: 'raw', answer: 'SSH-2.0-x\r\n\r\n' }, /not HTTP\/1\.1/],
    [
      'bytes after its 200',
      { kind: 'raw', answer: 'HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK\r\n\r\n' },
      /sent bytes after its answer/,
    ],
    ['a head that never ends', { kind: 'raw', answer: `HTTP/1.1 200 OK\r\nx: ${'a'.repeat(20_000)}` }, /over 16384/],
    ['an interim 1xx', { kind: 'raw', answer: 'HTTP/1.1 199 Wait\r\n\r\n' }, /with 199 Wait$/],
    ['a 300', { kind: 'raw', answer: 'HTTP/1.1 300 Choices\r\n\r\n' }, /with 300 Choices$/],
    [
      'a status line with text before it',
      { kind: 'raw', answer: 'xHTTP/1.1 200 OK\r\n\r\n' },
      /"xHTTP\/1.1 200 OK", not HTTP/,
    ],
    ['a status of four digits', { kind: 'raw', answer: 'HTTP/1.1 2000 OK\r\n\r\n' }, /"HTTP\/1.1 2000 OK", not HTTP/],
    [
      'a refusal with header fields and a long reason',
      { kind: 'raw', answer: `HTTP/1.1 407 ${'r'.repeat(100)}\r\nx-secret: no\r\n\r\n` },
      new RegExp(`with 407 ${'r'.repeat(60)}: it wants credentials`),
    ],
    ['a refusal without a reason', { kind: 'raw', answer: 'HTTP/1.1 502\r\n\r\n' }, /with 502$/],
    [
      'a refusal with bare LF line ends',
      { kind: 'raw', answer: 'HTTP/1.1 407 Auth\nx: y\n\n' },
      /with 407 Auth: it wants/,
    ],
    [
      'HTTP/2',
      { kind: 'raw', answer: '\u0000\u0000\u0000\u0004\u0000\u0000\u0000\u0000\u0000' },
      /answered CONNECT in HTTP\/2/,
    ],
    [
      'a whole head over the limit in one write',
      { kind: 'raw', answer: `HTTP/1.1 200 OK\r\nx: ${'a'.repeat(20_000)}\r\n\r\n` },
      /over 16384/,
    ],
    [
      'escape sequences in its reason',
      { kind: 'raw', answer: 'HTTP/1.1 403 \u001b[2J\u001b]0;pwned\u0007no\r\n\r\n' },
      /with 403 {2}\[2J \]0;pwned no: it does not allow/,
    ],
  ])(
    'a proxy that answers CONNECT with %s: the proxy’s failure, and the receiver never reached',
    async (_name, behaviour, said) => {
      const receiver = await sink()
      const proxy = await startProxy(behaviour)
      const transport = createHttp1Transport({ proxy: proxy.url })
      const response = await transport.send(requestTo(`${receiver.url}/in`))
      await transport.close?.()
      expect(failureOf(response)).toBe('proxy')
      expect(causeOf(response)).toMatch(said)
      expect(causeOf(response)).toContain(`the proxy ${proxy.url}`)
      expect(receiver.requests).toHaveLength(0)
    },
  )

  it('a proxy that cannot be reached: the proxy’s failure, naming the proxy and the reason, the error kept as cause', async () => {
    const receiver = await sink()
    const gone = await startProxy({ kind: 'tunnel' })
    await gone.close()
    const transport = createHttp1Transport({ proxy: gone.url })
    const response = await transport.send(requestTo(`${receiver.url}/in`))
    await transport.close?.()
    expect(failureOf(response)).toBe('proxy')
    expect(causeOf(response)).toMatch(/could not be reached \(.*ECONNREFUSED/)
    expect(((response as { cause: Error }).cause.cause as { code?: string }).code).toBe('ECONNREFUSED')
  })

  it('a refusal of its own has no cause beside its message, and the hint fits the status', async () => {
    const receiver = await sink()
    const proxy = await startProxy({ kind: 'refuse', status: 502 })
    const transport = createHttp1Transport({ proxy: proxy.url })
    const response = await transport.send(requestTo(`${receiver.url}/in`))
    await transport.close?.()
    const cause = (response as { cause: Error }).cause
    expect(cause).not.toHaveProperty('cause')
    expect(cause.message).not.toMatch(/credentials|does not allow/)
  })

  it('a proxy that closes before it answers: the proxy’s failure', async () => {
    const receiver = await sink()
    const proxy = await startProxy({ kind: 'raw', answer: 'HTTP/1.1 200' })
    // The raw answer is written and the connection then ended by the proxy's close below.
    const transport = createHttp1Transport({ proxy: proxy.url })
    const sending = transport.send(requestTo(`${receiver.url}/in`))
    await vi.waitFor(() => expect(proxy.connects).toHaveLength(1))
    await proxy.close()
    const response = await sending
    await transport.close?.()
    expect(failureOf(response)).toBe('proxy')
    expect(causeOf(response)).toMatch(/closed the connection before it answered CONNECT|could not be reached/)
  })

  it('takes a 2xx without a reason phrase, and one of 299, as the tunnel opened', async () => {
    const receiver = await sink()
    for (const answer of ['HTTP/1.1 200\r\n\r\n', 'HTTP/1.0 299 Fine\r\n\r\n']) {
      const proxy = await startProxy({ kind: 'tunnel', answer })
      const transport = createHttp1Transport({ proxy: proxy.url })
      expect(await transport.send(requestTo(`${receiver.url}/in`))).toMatchObject({ ok: true, status: 200 })
      await transport.close?.()
    }
    expect(receiver.requests).toHaveLength(2)
  })

  it('waits for a head of up to 16384 bytes, its end split across reads', async () => {
    const receiver = await sink()
    // The head's text, its last CRLF apart, is 16384 bytes exactly.
    const filler = 'x'.repeat(16_384 - 'HTTP/1.1 200 OK\r\nx: '.length)
    const proxy = await startProxy({ kind: 'tunnel', answer: `HTTP/1.1 200 OK\r\nx: ${filler}\r\n\r\n`, split: true })
    const transport = createHttp1Transport({ proxy: proxy.url })
    expect(await transport.send(requestTo(`${receiver.url}/in`))).toMatchObject({ ok: true, status: 200 })
    await transport.close?.()
  })

  it('reaches an https: proxy over TLS, with the transport’s TLS options, and tunnels inside it', async () => {
    const receiver = await sink(() => ({ status: 204 }), { tls: certificates.selfSigned })
    const proxy = await startProxy({ kind: 'tunnel' }, certificates.selfSigned)
    const untrusting = createHttp1Transport({ proxy: proxy.url })
    const refused = await untrusting.send(requestTo(`${receiver.url}/in`))
    await untrusting.close?.()
    // The proxy's certificate is not trusted: the proxy's failure, not the receiver's.
    expect(failureOf(refused)).toBe('proxy')
    const transport = createHttp1Transport({ proxy: proxy.url, tls: { ca: certificates.selfSigned.cert } })
    expect(await transport.send(requestTo(`${receiver.url}/in`))).toMatchObject({ ok: true, status: 204 })
    await transport.close?.()
    const byName = createHttp1Transport({
      proxy: proxy.url.replace('127.0.0.1', 'localhost'),
      tls: { ca: certificates.selfSigned.cert },
    })
    expect(await byName.send(requestTo(`${receiver.url}/in`))).toMatchObject({ ok: true, status: 204 })
    await byName.close?.()
    expect(proxy.connects).toHaveLength(2)
    // The proxy's name goes as SNI; an address never does (Node warns of it). The untrusting one never got that far.
    expect(proxy.servernames).toEqual([false, 'localhost'])
  })

  it('a proxy that never answers: the attempt ends at its deadline, and its connection frees the slot', async () => {
    const receiver = await sink()
    const silent = await startProxy({ kind: 'silent' })
    const transport = createHttp1Transport({ proxy: silent.url, connections: 1 })
    const first = await transport.send(requestTo(`${receiver.url}/in`, { timeoutMs: 100 }))
    expect(failureOf(first)).toBe('timeout')
    // The tunnel being opened is given up with the attempt: its connection to the proxy closes.
    await vi.waitFor(() => expect(silent.openConnections()).toBe(0))
    // With one connection per URL, a second attempt waits for the first's: it gets its own CONNECT.
    const second = await transport.send(requestTo(`${receiver.url}/in`, { timeoutMs: 100 }))
    expect(failureOf(second)).toBe('timeout')
    await transport.close?.()
    expect(silent.connects).toHaveLength(2)
  })

  it('blockPrivateNetworks: a literal non-public address is refused before the tunnel; a name is the proxy’s to resolve', async () => {
    const receiver = await sink()
    const proxy = await startProxy({ kind: 'tunnel' })
    const transport = createHttp1Transport({ proxy: proxy.url, blockPrivateNetworks: true })
    const { port } = new URL(receiver.url)
    const literal = await transport.send(requestTo(`http://127.0.0.1:${port}/in`))
    expect(failureOf(literal)).toBe('blocked')
    expect(proxy.connects).toEqual([])
    const named = await transport.send(requestTo(`http://localhost:${port}/in`))
    await transport.close?.()
    expect(named).toMatchObject({ ok: true, status: 200 })
    expect(proxy.connects.map((connect) => connect.authority)).toEqual([`localhost:${port}`])
  })

  it('refuses a proxy option it cannot use, naming it and hiding credentials', () => {
    expect(() => createHttp1Transport({ proxy: 'socks5://user:secret@proxy:1080' })).toThrow(OptionsError)
    expect(() => createHttp1Transport({ proxy: 'socks5://user:secret@proxy:1080' })).toThrow(/`proxy`.*\*\*\*@proxy/)
    expect(() => createHttp1Transport({ proxy: 'http://proxy:3128/path' })).toThrow(/no path/)
    expect(() => createHttp1Transport({ proxy: 'http://proxy:3128?x=1' })).toThrow(/no path, query/)
    expect(() => createHttp1Transport({ proxy: 'http://proxy:3128#x' })).toThrow(/no path, query or fragment/)
    expect(() => createHttp1Transport({ proxy: 'http://proxy:3128/' })).not.toThrow()
    expect(() => createHttp1Transport({ proxy: 'http://user:s3cret%zz@proxy:3128' })).toThrow(
      /not valid percent-encoding/,
    )
    expect(() => createHttp1Transport({ proxy: 'http://user:s3cret%zz@proxy:3128' })).toThrow(
      expect.objectContaining({ cause: expect.any(URIError) }),
    )
    expect(() => createHttp1Transport({ proxy: "http://user:s3cret'Pass@proxy:x" })).toThrow(OptionsError)
    expect(() => createHttp1Transport({ proxy: "http://user:s3cret'Pass@proxy:x" })).not.toThrow(/s3cret/)
    expect(() => createHttp1Transport({ proxy: 3128 as never })).toThrow(/proxy URL/)
  })
})

describe('the engine: a proxy’s failure is not the receiver’s', () => {
  it('ERR_PROXY, retried, and never opens the receiver’s breaker; a receiver failing through the proxy does', async () => {
    const proxy = await startProxy({ kind: 'refuse', status: 503 })
    const failing = await sink(() => ({ status: 503 }))
    const through = await startProxy({ kind: 'tunnel' })
    const breaker = { failures: 1, failureRate: 0.5, windowMs: 60_000, coolDownMs: 600_000 }
    const opens: string[] = []
    const viaBroken = new WebhookDestination({
      webhooks: [{ url: `${failing.url}/a` }],
      transport: createHttp1Transport({ proxy: proxy.url }),
      breaker,
      retryWindowMs: 0,
    })
    viaBroken.on('url-state', ({ circuit }) => opens.push(`broken proxy: ${circuit}`))
    const viaWorking = new WebhookDestination({
      webhooks: [{ url: `${failing.url}/b` }],
      transport: createHttp1Transport({ proxy: through.url }),
      breaker,
      retryWindowMs: 0,
    })
    viaWorking.on('url-state', ({ circuit }) => opens.push(`working proxy: ${circuit}`))
    const lost = await viaBroken.deliver({ type: 'track', userId: 'u1', event: 'E' })
    const refused = await viaWorking.deliver({ type: 'track', userId: 'u1', event: 'E' })
    await Promise.all([viaBroken.close(), viaWorking.close()])
    expect(lost.urls[0]?.lastError?.code).toBe('ERR_PROXY')
    expect(lost.urls[0]?.lastError?.message).toMatch(/egress proxy did not open a tunnel/)
    expect(refused.urls[0]?.lastError?.code).toBe('ERR_HTTP_STATUS')
    expect(opens).toEqual(['working proxy: open'])
    expect(failing.requests.map((request) => request.path)).toEqual(['/b'])
  })
})

describe('proxyRule: the proxy of each origin', () => {
  const rule = (env: Record<string, string>) => proxyRule('proxy', 'env', env)

  it('one URL for every origin, read once', () => {
    const every = proxyRule('proxy', 'http://proxy.internal:3128')
    expect(every?.('https://a.example')).toEqual(every?.('http://b.example:8080'))
    expect(every?.('https://a.example')).toMatchObject({ host: 'proxy.internal', port: 3128, tls: false })
    expect(proxyRule('proxy', undefined)).toBeUndefined()
  })

  it("'env': HTTPS_PROXY for https:, HTTP_PROXY for http:, the lowercase name first; none set: no rule", () => {
    const both = rule({ HTTPS_PROXY: 'http://secure:1', https_proxy: 'http://lower:2', HTTP_PROXY: 'https://plain:3' })
    expect(both?.('https://a.example')?.name).toBe('http://lower:2')
    expect(both?.('http://a.example')).toMatchObject({ name: 'https://plain:3', tls: true })
    expect(rule({ HTTPS_PROXY: 'http://secure:1' })?.('http://a.example')).toBeUndefined()
    expect(rule({ HTTPS_PROXY: 'http://secure:1' })?.('https://a.example')?.name).toBe('http://secure:1')
    const plainOnly = rule({ http_proxy: 'http://lower:4', HTTP_PROXY: 'http://upper:5' })
    expect(plainOnly?.('http://a.example')?.name).toBe('http://lower:4')
    expect(plainOnly?.('https://a.example')).toBeUndefined()
    expect(rule({})).toBeUndefined()
    expect(rule({ HTTPS_PROXY: '' })).toBeUndefined()
  })

  it('NO_PROXY: hosts and their subdomains, with or without a leading dot, a port, and * for all', () => {
    const env = { HTTPS_PROXY: 'http://p:1', HTTP_PROXY: 'http://p:1' }
    const bypassing = rule({ ...env, NO_PROXY: 'internal.example, .corp.example  localhost:8080,*.wild.example' })
    const through = (origin: string) => bypassing?.(origin) !== undefined
    expect(through('https://internal.example')).toBe(false)
    expect(through('https://api.internal.example')).toBe(false)
    expect(through('https://notinternal.example')).toBe(true)
    expect(through('https://x.corp.example')).toBe(false)
    expect(through('https://corp.example')).toBe(false)
    expect(through('http://localhost:8080')).toBe(false)
    expect(through('http://localhost:9090')).toBe(true)
    expect(through('https://a.wild.example')).toBe(false)
    expect(through('https://hooks.example.com')).toBe(true)
    expect(rule({ ...env, no_proxy: '*' })).toBeUndefined()
    // A port without a scheme's default written: 443 for https:, 80 for http:.
    const ports = rule({ ...env, NO_PROXY: 'secure.example:443,plain.example:80' })
    expect(ports?.('https://secure.example')).toBeUndefined()
    expect(ports?.('http://secure.example')).toBeDefined()
    expect(ports?.('http://plain.example')).toBeUndefined()
    expect(ports?.('https://plain.example')).toBeDefined()
    // An IPv6 address in brackets, with a port; entries that are not a host and a port are left out.
    const odd = rule({ ...env, NO_PROXY: '[::1]:8080,a:b:80,host:80x' })
    expect(odd?.('http://[::1]:8080')).toBeUndefined()
    expect(odd?.('http://[::1]:9090')).toBeDefined()
    expect(odd?.('http://b:80')).toBeDefined()
    expect(odd?.('http://host:80')).toBeDefined()
  })

  it('a bad proxy variable is named in the error', () => {
    expect(() => rule({ HTTPS_PROXY: 'not a url' })).toThrow(/`HTTPS_PROXY`/)
  })

  it('reads a proxy URL: port by scheme, IPv6 brackets, and no credentials in its name', () => {
    expect(proxyAddress('proxy', 'https://[::1]')).toMatchObject({ host: '::1', port: 443, tls: true })
    const withCredentials = proxyAddress('proxy', 'http://me:s%40id@proxy:8080')
    expect(withCredentials).toMatchObject({
      name: 'http://proxy:8080',
      port: 8080,
      authorization: `Basic ${Buffer.from('me:s@id').toString('base64')}`,
    })
    expect(proxyAddress('proxy', 'http://proxy')).toMatchObject({ port: 80, tls: false, authorization: undefined })
    expect(proxyAddress('proxy', 'http://me@proxy').authorization).toBe(`Basic ${btoa('me:')}`)
    expect(proxyAddress('proxy', 'http://:pw@proxy').authorization).toBe(`Basic ${btoa(':pw')}`)
  })
})

describe('openTunnel: one answer, whatever the socket does after it', () => {
  it('calls back once, with the socket, even when the proxy then ends the tunnel', async () => {
    const receiver = await sink()
    const proxy = await startProxy({ kind: 'tunnel' })
    const calls: Array<[Error | undefined, boolean]> = []
    const { port } = new URL(proxy.url)
    openTunnel(
      proxyAddress('proxy', `http://127.0.0.1:${port}`),
      new URL(receiver.url).host,
      undefined,
      (error, socket) => {
        calls.push([error, socket !== undefined])
        socket?.on('error', () => undefined)
        socket?.on('data', () => undefined)
      },
    )
    await vi.waitFor(() => expect(calls).toHaveLength(1))
    // The proxy goes away: the socket ends, and errors, after the answer was given.
    await proxy.close()
    await new Promise((resolve) => setImmediate(resolve))
    expect(calls).toEqual([[undefined, true]])
  })
})
