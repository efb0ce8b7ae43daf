import fc from 'fast-check'
import { createGzip } from 'node:zlib'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Client, type DeliveryError, OptionsError, type ClientOptions, type SentInfo } from '../../src/index.js'
import { CLIENT_BUILDS } from '../helpers/builds.js'
import { collectGarbage } from '../helpers/gc.js'
import { RESPONSE_BODY_CAP as RESPONSE_READ_BYTES } from '../../src/core/limits.js'
import { startRawServer, trickle, writeForever, type RawBehaviour, type RawServer } from '../helpers/raw-server.js'
import { thrownBy } from '../helpers/thrown.js'

let server: RawServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** Each outcome the client reported for one message: 'sent' events and 'error' events alike. */
interface Outcomes {
  sent: SentInfo[]
  errors: DeliveryError[]
}

function clientFor(
  url: string,
  options: ClientOptions = {},
  Build: typeof Client = Client,
): { client: Client; outcomes: Outcomes } {
  const client = new Build('key', { endpoint: url, flushAt: 1, timeout: 400, retry: { limit: 0 }, ...options })
  const outcomes: Outcomes = { sent: [], errors: [] }
  client.on('sent', (info) => outcomes.sent.push(info))
  client.on('error', (error) => outcomes.errors.push(error))
  return { client, outcomes }
}

/** Sends one message through a fresh client of `Build` against `behaviour` and waits for flush() to settle. */
async function sendOneAgainst(Build: typeof Client, behaviour: RawBehaviour, options: ClientOptions = {}) {
  server = await startRawServer(behaviour)
  const { client, outcomes } = clientFor(server.url, options, Build)
  client.track({ userId: 'u1', event: 'E' })
  await client.flush()
  return outcomes
}

const OK_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n'

describe.each(CLIENT_BUILDS)('the %s', (_build, Build) => {
  describe('a 2xx whose body misbehaves: accepted, and the attempt still ends within the timeout', () => {
    it('200 then silence: flush() resolves and the batch counts as delivered', async () => {
      const outcomes = await sendOneAgainst(Build, (socket) => socket.write(`${OK_HEAD}content-length: 100\r\n\r\n`))
      expect(outcomes.errors).toEqual([])
      expect(outcomes.sent.map((info) => info.status)).toEqual([200])
    })

    it('200 then one byte every 300 ms: flush() resolves and the batch counts as delivered', async () => {
      const outcomes = await sendOneAgainst(Build, (socket) => {
        socket.write(`${OK_HEAD}content-length: 1000000\r\n\r\n`)
        trickle(socket, 'x', 300)
      })
      expect(outcomes.errors).toEqual([])
      expect(outcomes.sent).toHaveLength(1)
    })

    it('200 with an endless fast body: flush() resolves and the client stops reading at its cap', async () => {
      const outcomes = await sendOneAgainst(
        Build,
        (socket) => {
          socket.write(`${OK_HEAD}connection: close\r\n\r\n`)
          writeForever(socket, Buffer.alloc(64 * 1024, 'x'))
        },
        { timeout: 5_000 },
      )
      expect(outcomes.sent).toHaveLength(1)
      const connection = server?.connections[0]
      await connection?.closed
      // What the server got rid of before the client closed the socket: the cap, plus what the
      // kernel's socket buffers and the HTTP stack's stream buffer hold on loopback (a few MB).
      // Reading to the end would never stop: the assertion is that it stopped, far below this.
      expect(connection?.written).toBeLessThan(RESPONSE_READ_BYTES + 32 * 1024 * 1024)
    })

    it('200 with an endless gzip body of zeros (a decompression bomb): flush() resolves, little of it is sent', async () => {
      const outcomes = await sendOneAgainst(
        Build,
        (socket) => {
          socket.write(`${OK_HEAD}content-encoding: gzip\r\nconnection: close\r\n\r\n`)
          const gzip = createGzip()
          gzip.pipe(socket)
          socket.on('close', () => gzip.destroy())
          const zeros = Buffer.alloc(1024 * 1024)
          const pump = () => {
            while (!gzip.destroyed && gzip.write(zeros)) {
              // until the compressor pushes back
            }
          }
          gzip.on('drain', pump)
          pump()
        },
        { timeout: 5_000 },
      )
      expect(outcomes.sent).toHaveLength(1)
      const connection = server?.connections[0]
      await connection?.closed
      // Compressed zeros are about 1/1000 of their size: even the kernel's buffers full of them would
      // be gigabytes decompressed, had the client read on.
      expect(connection?.written).toBeLessThan(32 * 1024 * 1024)
    })

    it('200 with a 64 MiB body from a fetch that counts what is pulled: the client pulls its cap and a chunk or two more', async () => {
      const chunk = new Uint8Array(256 * 1024)
      let pulled = 0
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled >= 64 * 1024 * 1024) controller.close()
          else {
            pulled += chunk.byteLength
            controller.enqueue(chunk)
          }
        },
      })
      const fetch: typeof globalThis.fetch = async () => new Response(body, { status: 200 })
      const { client, outcomes } = clientFor('http://127.0.0.1:9', { fetch, timeout: 10_000 }, Build)
      client.track({ userId: 'u1', event: 'E' })
      await client.flush()
      expect(outcomes.sent).toHaveLength(1)
      // The stream keeps one chunk queued ahead of the reader (its high-water mark).
      expect(pulled).toBeLessThanOrEqual(RESPONSE_READ_BYTES + 2 * chunk.byteLength)
    })

    it('200 with a truncated body (Content-Length longer than what comes, then close): delivered', async () => {
      const outcomes = await sendOneAgainst(Build, (socket) => {
        socket.write(`${OK_HEAD}content-length: 1000\r\n\r\n{"ok":`)
        socket.end()
      })
      expect(outcomes.errors).toEqual([])
      expect(outcomes.sent).toHaveLength(1)
    })

    it('200 with broken chunked framing: delivered (the status was final)', async () => {
      const outcomes = await sendOneAgainst(Build, (socket) => {
        socket.write(`${OK_HEAD}transfer-encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n`)
      })
      expect(outcomes.errors).toEqual([])
      expect(outcomes.sent).toHaveLength(1)
    })
  })

  describe('responses that never become a 2xx: each attempt ends, and the batch fails with a typed error', () => {
    it('headers never sent: ERR_RETRIES_EXHAUSTED with the timeout as cause', async () => {
      const outcomes = await sendOneAgainst(Build, () => {})
      expect(outcomes.sent).toEqual([])
      expect(outcomes.errors.map((error) => error.code)).toEqual(['ERR_RETRIES_EXHAUSTED'])
      expect((outcomes.errors[0]?.cause as Error | undefined)?.name).toBe('TimeoutError')
    })

    it('a status line and then headers that never end: ERR_RETRIES_EXHAUSTED', async () => {
      const outcomes = await sendOneAgainst(Build, (socket) => {
        socket.write('HTTP/1.1 200 OK\r\n')
        trickle(socket, 'x-slow: y\r\n', 50)
      })
      expect(outcomes.errors.map((error) => error.code)).toEqual(['ERR_RETRIES_EXHAUSTED'])
    })

    it('headers larger than the HTTP stack takes: ERR_RETRIES_EXHAUSTED, nothing buffered without bound', async () => {
      const outcomes = await sendOneAgainst(Build, (socket) => {
        socket.write(`HTTP/1.1 200 OK\r\nx-huge: `)
        writeForever(socket, Buffer.alloc(16 * 1024, 'h'))
      })
      expect(outcomes.errors.map((error) => error.code)).toEqual(['ERR_RETRIES_EXHAUSTED'])
    })

    it('endless 100 Continue answers: ERR_RETRIES_EXHAUSTED', async () => {
      const outcomes = await sendOneAgainst(Build, (socket) => trickle(socket, 'HTTP/1.1 100 Continue\r\n\r\n', 20))
      expect(outcomes.errors.map((error) => error.code)).toEqual(['ERR_RETRIES_EXHAUSTED'])
    })

    it('not HTTP at all: ERR_RETRIES_EXHAUSTED', async () => {
      const outcomes = await sendOneAgainst(Build, (socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'))
      expect(outcomes.errors.map((error) => error.code)).toEqual(['ERR_RETRIES_EXHAUSTED'])
    })

    // fetch (undici's llhttp) refuses the response; Node's stack takes its 200, read as chunked, as
    // RFC 9112 section 6.3 frames it, and never reuses the connection: what could be smuggled is a
    // next response on it (docs/client.md, "On Node").
    it('a Content-Length and a chunked Transfer-Encoding at once (request smuggling shape): settled once, the connection not reused', async () => {
      const outcomes = await sendOneAgainst(Build, (socket) =>
        socket.write(`${OK_HEAD}content-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n`),
      )
      expect(outcomes.sent.length + outcomes.errors.length).toBe(1)
      if (Build === Client) expect(outcomes.sent).toHaveLength(1)
      else expect(outcomes.errors.map((error) => error.code)).toEqual(['ERR_RETRIES_EXHAUSTED'])
    })

    it.each([301, 302, 303, 307, 308])(
      'a %i redirect: ERR_REJECTED naming the status, never followed (a followed 301-303 would drop the body and count the GET as delivered)',
      async (status) => {
        const outcomes = await sendOneAgainst(Build, (socket, connection) => {
          if (connection === server?.connections[0])
            socket.end(`HTTP/1.1 ${status} Moved\r\nlocation: /elsewhere\r\ncontent-length: 0\r\n\r\n`)
          else socket.end(`${OK_HEAD}content-length: 2\r\n\r\n{}`)
        })
        expect(outcomes.sent).toEqual([])
        expect(outcomes.errors.map((error) => [error.code, error.status])).toEqual([['ERR_REJECTED', status]])
        expect(server?.requests).toBe(1)
      },
    )

    it('a 400 whose reason trickles forever: ERR_REJECTED within the timeout, the reason cut off', async () => {
      const outcomes = await sendOneAgainst(Build, (socket) => {
        socket.write('HTTP/1.1 400 Bad Request\r\ncontent-length: 100000\r\n\r\nbad write key')
        trickle(socket, '.', 100)
      })
      expect(outcomes.errors.map((error) => error.code)).toEqual(['ERR_REJECTED'])
      expect(outcomes.errors[0]?.message).toContain('bad write key')
    })
  })

  describe('close({ timeout }) returns by its deadline whatever the peer does', () => {
    const behaviours: Array<[string, RawBehaviour]> = [
      ['200 then silence', (socket) => socket.write(`${OK_HEAD}content-length: 100\r\n\r\n`)],
      [
        '200 then a trickle',
        (socket) => {
          socket.write(`${OK_HEAD}content-length: 1000000\r\n\r\n`)
          trickle(socket, 'x', 300)
        },
      ],
      ['headers never sent', () => {}],
    ]
    it.each(behaviours)('%s, with a client timeout far longer than close()', async (_name, behaviour) => {
      server = await startRawServer(behaviour)
      const { client, outcomes } = clientFor(server.url, { timeout: 600_000 }, Build)
      client.track({ userId: 'u1', event: 'E' })
      const listening = server
      await vi.waitFor(() => expect(listening.requests).toBe(1), { timeout: 10_000 })
      // A garbage collection here once left combined abort signals deaf: close() must not depend on them.
      collectGarbage()
      await client.close({ timeout: 300 })
      // One outcome: delivered if the 2xx headers came, else ERR_CLOSE_TIMEOUT.
      expect(outcomes.sent.length + outcomes.errors.length).toBe(1)
      expect(outcomes.errors.every((error) => error.code === 'ERR_CLOSE_TIMEOUT')).toBe(true)
      expect(client.pending).toBe(0)
    })
  })
})

describe('the Node platform against an endpoint that holds its sockets', () => {
  it('holds at most maxConcurrentRequests sockets while 2xx bodies trickle: the next batch waits for one', async () => {
    let open = 0
    let most = 0
    server = await startRawServer((socket) => {
      open++
      most = Math.max(most, open)
      socket.on('close', () => open--)
      socket.write(`${OK_HEAD}content-length: 50000\r\n\r\n`)
      trickle(socket, '.', 20)
    })
    const { client, outcomes } = clientFor(server.url, { timeout: 150, maxConcurrentRequests: 2 })
    for (let index = 0; index < 6; index++) client.track({ userId: 'u1', event: `E${index}` })
    await client.close()
    // Each is delivered at its head, and its socket stays in use until its deadline ends the body.
    // A batch that waited for a socket past its own deadline is retried as a timeout (no retries
    // here): each message settles once, and the sockets stay at two.
    const settled = outcomes.sent.reduce((sum, info) => sum + info.messages.length, 0) + outcomes.errors.length
    expect(settled).toBe(6)
    expect(outcomes.sent.length).toBeGreaterThanOrEqual(2)
    expect(most).toBeLessThanOrEqual(2)
  })

  it('quotes a refusal’s reason phrase without its control characters, and at most 100 characters of it', async () => {
    const outcomes = await sendOneAgainst(Client, (socket) =>
      socket.end(`HTTP/1.1 400 \u001b[2J\u001b]0;pwned\u0007${'r'.repeat(3_000)}\r\ncontent-length: 0\r\n\r\n`),
    )
    const cause = outcomes.errors[0]?.cause as { response?: { statusText: string } } | undefined
    expect(cause?.response?.statusText).toBe(` [2J ]0;pwned ${'r'.repeat(100 - 14)}`)
    expect(outcomes.errors[0]?.message).not.toContain('\u001b')
    expect(outcomes.errors[0]?.message).not.toContain('\u0007')
  })
})

describe('hostile option values', () => {
  it('a fetch that never settles and ignores its signal: each attempt still ends at the timeout', async () => {
    const fetch: typeof globalThis.fetch = () => new Promise(() => {})
    const { client, outcomes } = clientFor('http://127.0.0.1:9', { fetch, timeout: 200 })
    client.track({ userId: 'u1', event: 'E' })
    await client.flush()
    expect(outcomes.errors.map((error) => error.code)).toEqual(['ERR_RETRIES_EXHAUSTED'])
  })

  it('a fetch that never settles and ignores its signal: close({ timeout }) returns by its deadline', async () => {
    const fetch: typeof globalThis.fetch = () => new Promise(() => {})
    const { client, outcomes } = clientFor('http://127.0.0.1:9', { fetch, timeout: 600_000 })
    client.track({ userId: 'u1', event: 'E' })
    await client.close({ timeout: 100 })
    expect(outcomes.errors.map((error) => error.code)).toEqual(['ERR_CLOSE_TIMEOUT'])
  })

  it.each<[string, typeof globalThis.fetch]>([
    [
      'throws synchronously',
      () => {
        throw new Error('boom')
      },
    ],
    ['resolves to something that is not a Response', async () => ({}) as Response],
    [
      'resolves to a 200 whose body errors at once',
      async () => new Response(new ReadableStream({ start: (controller) => controller.error(new Error('broken')) })),
    ],
    [
      'resolves to a 200 whose body ignores cancel',
      async () => new Response(new ReadableStream({ cancel: () => new Promise(() => {}) })),
    ],
  ])('a fetch that %s: one outcome per message, nothing thrown', async (_name, fetch) => {
    const { client, outcomes } = clientFor('http://127.0.0.1:9', { fetch, timeout: 300 })
    client.track({ userId: 'u1', event: 'E' })
    await client.flush()
    expect(outcomes.sent.length + outcomes.errors.length).toBe(1)
  })

  it('a logger whose methods throw cannot make flush() reject or leave a message unsettled', async () => {
    const logger = {
      log: () => {
        throw new Error('log broke')
      },
      error: () => {
        throw new Error('error broke')
      },
    }
    const client = new Client('key', {
      endpoint: 'http://127.0.0.1:9',
      flushAt: 1,
      timeout: 300,
      retry: { limit: 0 },
      logger,
      verbose: true,
    })
    const settled: unknown[] = []
    client.track({ userId: 'u1', event: 'E' }, (error) => settled.push(error))
    await expect(client.flush()).resolves.toBeUndefined()
    expect(settled).toHaveLength(1)
    expect(client.pending).toBe(0)
  })
})

describe('credentials in the endpoint URL', () => {
  it.each([
    'http://user:s3cret@127.0.0.1:8787',
    'https://:s3cret@ingest.example.com/base',
    'https://s3cret@ingest.example.com',
    'http://user:s3cret@127.0.0.1:99999',
    'ftp://user:s3cret@ingest.example.com',
    'user:s3cret@ingest.example.com',
    'https://user:s3cret@ingest.example.com/v1/batch',
  ])('%s: refused at construction with OptionsError on endpoint, the secret not shown', (endpoint) => {
    const thrown = thrownBy(() => {
      new Client('key', { endpoint })
    })
    expect(thrown).toBeInstanceOf(OptionsError)
    expect(thrown).toMatchObject({ code: 'ERR_INVALID_OPTION', option: 'endpoint' })
    expect(String((thrown as Error).message)).not.toContain('s3cret')
    expect(String((thrown as Error).stack)).not.toContain('s3cret')
  })

  it('names the URL to use instead', () => {
    expect(() => new Client('key', { endpoint: 'https://user:s3cret@ingest.example.com/base' })).toThrow(
      '"https://ingest.example.com/base"',
    )
  })
})

describe('credentials in the endpoint URL (property-based)', () => {
  it('refuses every endpoint with credentials, and never shows the password of one it refuses, well-formed or not', () => {
    const text = fc.string({ unit: fc.constantFrom(...'abcXYZ019-._~%!$&()*+,;=/?#@:'), minLength: 1, maxLength: 12 })
    fc.assert(
      fc.property(
        fc.constantFrom('http', 'https', 'ftp', 'HTTP', ''),
        text,
        text,
        fc.constantFrom('127.0.0.1', 'ingest.example.com', 'bad host', '[::1]'),
        fc.constantFrom('', ':8787', ':99999', ':x'),
        fc.constantFrom('', '/', '/base', '/v1/batch', '?a=1', '#f'),
        (scheme, user, secret, host, port, rest) => {
          const password = `PW${secret}`
          const endpoint = `${scheme === '' ? '' : `${scheme}://`}${user}:${password}@${host}${port}${rest}`
          try {
            new Client('key', { endpoint })
          } catch (error) {
            expect(error).toBeInstanceOf(OptionsError)
            expect((error as Error).message).not.toContain(password)
            return
          }
          // Accepted: then what looked like credentials is, by the URL standard, part of the path.
          const parsed = new URL(endpoint)
          expect([parsed.username, parsed.password]).toEqual(['', ''])
        },
      ),
      { numRuns: 500 },
    )
  })
})

describe('callbacks and listeners that throw what cannot be shown', () => {
  it.each(CLIENT_BUILDS)(
    '%s: a null-prototype object thrown by a callback is logged; the client goes on',
    async (_name, Build) => {
      const lines: string[] = []
      const fetch = (async () => Response.json({})) as typeof globalThis.fetch
      const client = new Build('key', {
        endpoint: 'https://ingest.test',
        fetch,
        logger: { log: () => undefined, error: (line) => lines.push(line) },
      })
      const sent: string[] = []
      client.on('sent', (info) => sent.push(...info.messages.map((message) => message.messageId)))
      client.track({ userId: 'u1', event: 'E', messageId: 'first' }, () => {
        throw Object.create(null)
      })
      client.track({ userId: 'u1', event: 'E', messageId: 'second' })
      await expect(client.close({ timeout: 5_000 })).resolves.toBeUndefined()
      expect(sent).toEqual(['first', 'second'])
      expect(lines).toEqual(['a listener threw: a value that cannot be shown'])
    },
  )
})
