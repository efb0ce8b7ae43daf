import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RESPONSE_BODY_CAP } from '../../src/core/limits.js'
import { HTTP_PROTOCOL_CODE, MAX_HEAD_BYTES, ResponseReader } from '../../src/http1/response-reader.js'

/** What a head holds beside the status and the framing when the reader keeps no refusal. */
const NOTHING_KEPT = { ok: true, statusText: '', fields: undefined, body: undefined }

/** Reads `text` (Latin-1) in the chunks `cuts` splits it into; what the reader made of it. */
function readIn(text: string, cuts: number[] = [], keepRefusal = 0) {
  const bytes = Buffer.from(text, 'latin1')
  const reader = new ResponseReader(keepRefusal)
  const points = [...new Set(cuts.filter((cut) => cut > 0 && cut < bytes.length))].sort((a, b) => a - b)
  let outcome = 'more'
  let from = 0
  for (const to of [...points, bytes.length]) {
    outcome = reader.read(bytes.subarray(from, to))
    from = to
    if (outcome !== 'more') break
  }
  return { reader, outcome }
}

const OK = 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nhello'
const CHUNKED =
  'HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\nRetry-After: 7\r\n\r\n' +
  '5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nx-trailer: 1\r\n\r\n'

describe('ResponseReader: framing (RFC 9112 section 6.3)', () => {
  it('reads a Content-Length response: its status, and a connection fit for another request', () => {
    const { reader, outcome } = readIn(OK)
    expect(outcome).toBe('complete')
    expect(reader.head).toEqual({ ...NOTHING_KEPT, status: 200, retryAfter: null, keepAlive: true, idleMs: undefined })
    expect(reader.reusable).toBe(true)
  })

  it('reads a chunked response with extensions and trailers, and its Retry-After', () => {
    const { reader, outcome } = readIn(CHUNKED)
    expect(outcome).toBe('complete')
    expect(reader.head).toMatchObject({ status: 503, retryAfter: '7', keepAlive: true })
    // Framed to its end, yet a refusal: the connection is not trusted with another request.
    expect(reader.reusable).toBe(false)
    expect(readIn(CHUNKED.replace('503 Busy', '200 OK')).reader.reusable).toBe(true)
  })

  it('reads the same response however the connection splits it (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(OK, CHUNKED, 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n'),
        fc.array(fc.nat({ max: 200 }), { maxLength: 12 }),
        (text, cuts) => {
          const whole = readIn(text)
          const split = readIn(text, cuts)
          expect(split.outcome).toBe('complete')
          expect(split.reader.head).toEqual(whole.reader.head)
          expect(split.reader.reusable).toBe(whole.reader.reusable)
        },
      ),
    )
  })

  it('takes a bare LF as a line’s end, as RFC 9112 allows, in the head and in a chunked body', () => {
    const bare = readIn(CHUNKED.replaceAll('\r\n', '\n'), [3, 40, 70, 80])
    expect(bare.outcome).toBe('complete')
    expect(bare.reader.head).toEqual(readIn(CHUNKED).reader.head)
    const mixed = readIn('HTTP/1.1 200 OK\ncontent-length: 2\r\nretry-after: 3\n\r\nok')
    expect(mixed.outcome).toBe('complete')
    expect(mixed.reader.head).toMatchObject({ status: 200, retryAfter: '3' })
    expect(mixed.reader.reusable).toBe(true)
  })

  it('skips interim 1xx heads and answers with the final one', () => {
    const { reader, outcome } = readIn(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n',
    )
    expect(outcome).toBe('complete')
    expect(reader.head?.status).toBe(202)
  })

  it('reads a body without a length to the connection’s end, and does not reuse the connection', () => {
    const { reader, outcome } = readIn('HTTP/1.1 200 OK\r\n\r\nsome body')
    expect(outcome).toBe('more')
    expect(reader.head?.status).toBe(200)
    expect(reader.ended()).toBe(true)
    expect(reader.reusable).toBe(false)
  })

  it('knows a response cut short by the connection’s end from one that ran to it', () => {
    const cut = readIn('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhal')
    expect(cut.outcome).toBe('more')
    expect(cut.reader.ended()).toBe(false)
    expect(new ResponseReader().ended()).toBe(false)
  })

  it.each([
    ['HTTP/1.1 204 No Content\r\n\r\n', true],
    ['HTTP/1.1 299 Odd\r\ncontent-length: 0\r\n\r\n', true],
    // Only a 2xx leaves the connection open: a receiver may write a stray answer after a refusal.
    ['HTTP/1.1 300 Multiple Choices\r\ncontent-length: 0\r\n\r\n', false],
    ['HTTP/1.1 304 Not Modified\r\n\r\n', false],
    ['HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n', false],
    ['HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n', false],
    ['HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 0\r\n\r\n', false],
    ['HTTP/1.1 200 OK\r\nConnection: Keep-Alive, Close\r\ncontent-length: 0\r\n\r\n', false],
    ['HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n', false],
    ['HTTP/1.0 200 OK\r\nConnection: keep-alive\r\ncontent-length: 0\r\n\r\n', true],
    ['HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n', false],
    // Both framings: read as chunked, and never trusted with another request.
    ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n', false],
    // Bytes nobody asked for after the response.
    ['HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n', false],
  ])('%j: reusable %s', (text, reusable) => {
    const { reader } = readIn(text)
    expect(reader.head?.status).toBeGreaterThanOrEqual(200)
    reader.ended()
    expect(reader.reusable).toBe(reusable)
  })

  it('reads 599 as a final answer and 100 as an interim one: the ends of the range HTTP has', () => {
    expect(readIn('HTTP/1.1 599 Odd\r\ncontent-length: 0\r\n\r\n').reader.head?.status).toBe(599)
    expect(readIn('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n').reader.head?.status).toBe(204)
  })

  it('reads a status line without a reason phrase', () => {
    expect(readIn('HTTP/1.1 202\r\ncontent-length: 0\r\n\r\n').reader.head?.status).toBe(202)
    expect(readIn('HTTP/1.1 202\r\n\r\n').reader.head?.status).toBe(202)
  })

  it('reads a chunk size with whitespace after it, and the same Content-Length sent twice', () => {
    expect(readIn('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2 \t\r\nok\r\n0\r\n\r\n').outcome).toBe(
      'complete',
    )
    const twice = readIn('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nContent-Length: 2\r\n\r\nok')
    expect(twice.outcome).toBe('complete')
    expect(twice.reader.reusable).toBe(true)
  })

  it.each([
    [
      'Transfer-Encoding: gzip, chunked',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
      'complete',
      true,
    ],
    // A final coding other than chunked runs to the connection's end, whatever Content-Length says.
    [
      'Transfer-Encoding: gzip beside Content-Length',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\ncontent-length: 0\r\n\r\n',
      'more',
      false,
    ],
  ])('%s', (_what, text, outcome, reusable) => {
    const read = readIn(text)
    expect(read.outcome).toBe(outcome)
    expect(read.reader.reusable).toBe(reusable)
  })

  it('looks only at the fields it names, not at others of the same length', () => {
    const { reader, outcome } = readIn(
      'HTTP/1.0 200 OK\r\nx-custom-heade: not a length\r\nx-transfer-encode: chunked\r\nx-retry-aft: 9\r\n' +
        'x-request1: timeout=9\r\nconnection: upgrade\r\ncontent-length: 2\r\n\r\nok',
    )
    expect(outcome).toBe('complete')
    expect(reader.head).toEqual({ ...NOTHING_KEPT, status: 200, retryAfter: null, keepAlive: false, idleMs: undefined })
  })

  it('takes the receiver’s Keep-Alive timeout, and Retry-After only when sent once', () => {
    expect(readIn('HTTP/1.1 200 OK\r\nKeep-Alive: timeout = 10\r\ncontent-length: 0\r\n\r\n').reader.head?.idleMs).toBe(
      10_000,
    )
    const { reader } = readIn('HTTP/1.1 429 Slow\r\nKeep-Alive: max=5, timeout=3\r\ncontent-length: 0\r\n\r\n')
    expect(reader.head).toMatchObject({ status: 429, idleMs: 3_000, retryAfter: null })
    const twice = readIn('HTTP/1.1 429 Slow\r\nRetry-After: 1\r\nretry-after: 2\r\ncontent-length: 0\r\n\r\n')
    expect(twice.reader.head?.retryAfter).toBeNull()
  })
})

describe('ResponseReader: what it will not read', () => {
  it.each([
    ['a status line that is not HTTP/1.x', 'HTTP/2 200\r\n\r\n', 'the status line is "HTTP/2 200"'],
    [
      "an HTTP/2 server's first frame (SETTINGS), said at its first byte",
      '\x00\x00\x06\x04\x00\x00\x00\x00\x00',
      'it answered in HTTP/2, and eventwire sends HTTP/1.1: have the receiver accept HTTP/1.1 too',
    ],
    ['a status of four digits', 'HTTP/1.1 2000\r\n\r\n', 'the status line is "HTTP/1.1 2000"'],
    ['a status line after other bytes', 'xHTTP/1.1 200 OK\r\n\r\n', 'the status line is "xHTTP/1.1 200 OK"'],
    ['a long status line, named by its start', `${'y'.repeat(60)}\r\n\r\n`, `the status line is "${'y'.repeat(40)}"`],
    ['a line folded with a tab', 'HTTP/1.1 200 OK\r\nx-a: 1\r\n\tx-b: 2\r\n\r\n', 'a header line is "\\tx-b: 2"'],
    [
      'a header line without a colon before one with',
      'HTTP/1.1 200 OK\r\njust text\r\nx-a: 1\r\n\r\n',
      'a header line is "just text"',
    ],
    [
      'a long header line, named by its start',
      `HTTP/1.1 200 OK\r\n${'z'.repeat(60)}\r\n\r\n`,
      `a header line is "${'z'.repeat(40)}"`,
    ],
    [
      'a Content-Length with more after its digits',
      'HTTP/1.1 200 OK\r\ncontent-length: 5x\r\n\r\n',
      'Content-Length is "5x"',
    ],
    [
      'a chunk size after other bytes',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nx5\r\n',
      'a chunk size is "x5"',
    ],
    [
      'a chunk size with more after it',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5 x\r\n',
      'a chunk size is "5 x"',
    ],
    ['a status of two digits', 'HTTP/1.1 20 OK\r\n\r\n', 'the status line is "HTTP/1.1 20 OK"'],
    ['a status past 599', 'HTTP/1.1 600 OK\r\n\r\n', 'status 600 is outside 100-599'],
    ['a status of 999', 'HTTP/1.1 999 OK\r\ncontent-length: 0\r\n\r\n', 'status 999 is outside 100-599'],
    ['a status below 100', 'HTTP/1.1 099 OK\r\n\r\n', 'status 099 is outside 100-599'],
    ['garbage', 'hello there\r\n\r\n', 'the status line is "hello there"'],
    [
      '101, never asked for',
      'HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\n',
      '101 Switching Protocols was not asked for',
    ],
    ['a folded header line', 'HTTP/1.1 200 OK\r\nx-a: 1\r\n  folded\r\n\r\n', 'a header line is "  folded"'],
    ['a header line without a name', 'HTTP/1.1 200 OK\r\n: value\r\n\r\n', 'a header line is ": value"'],
    ['a header line without a colon', 'HTTP/1.1 200 OK\r\njust text\r\n\r\n', 'a header line is "just text"'],
    [
      'two different Content-Length values',
      'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n',
      'it has two different Content-Length values',
    ],
    [
      'a Content-Length that is not a number',
      'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n',
      'Content-Length is "-1"',
    ],
    [
      'a chunk size that is not hex',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
      'a chunk size is "zz"',
    ],
    [
      'a chunk without its CRLF',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nab\r\n',
      'a chunk does not end with CRLF',
    ],
  ])('%s: a protocol error that says so', (_what, text, message) => {
    expect(() => readIn(text)).toThrow(expect.objectContaining({ code: 'ERR_EVENTWIRE_HTTP_PROTOCOL' }))
    expect(() => readIn(text)).toThrow(`the receiver's response is not valid HTTP/1.1: ${message}`)
  })

  it('keeps the head of a response whose body then breaks the framing', () => {
    const reader = new ResponseReader()
    expect(() => reader.read(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'))).toThrow()
    expect(reader.head?.status).toBe(200)
  })

  it(`refuses a head over ${MAX_HEAD_BYTES} bytes, even one that never ends`, () => {
    const long = `HTTP/1.1 200 OK\r\nx-long: ${'a'.repeat(MAX_HEAD_BYTES)}`
    expect(() => readIn(long, [100, 5_000, 10_000])).toThrow(expect.objectContaining({ code: HTTP_PROTOCOL_CODE }))
    expect(() => readIn(`${long}\r\n\r\n`)).toThrow(/over 16384 bytes/)
  })

  it('refuses endless trailers and an endless chunk-size line', () => {
    const trailers = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n${'x-t: 1\r\n'.repeat(3_000)}`
    expect(() => readIn(trailers)).toThrow(/trailers are over/)
    const line = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1${'0'.repeat(5_000)}`
    expect(() => readIn(line)).toThrow(/line of its chunked body/)
  })

  it.each([
    ['a Content-Length over the cap, at once', `HTTP/1.1 200 OK\r\ncontent-length: ${RESPONSE_BODY_CAP + 1}\r\n\r\n`],
    [
      'a chunked body past the cap',
      `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${'4000\r\n'}${'x'.repeat(0x4000)}\r\n`.repeat(1) +
        `${'4000\r\n'}${'x'.repeat(0x4000)}\r\n`.repeat(4),
    ],
    ['a body to the end past the cap', `HTTP/1.1 200 OK\r\n\r\n${'x'.repeat(RESPONSE_BODY_CAP + 1)}`],
    [
      'a chunk size past the cap, at once',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nx\r\nFFFFFFF\r\n',
    ],
  ])('%s: stops reading (over-cap) with the head kept', (_what, text) => {
    const { reader, outcome } = readIn(text)
    expect(outcome).toBe('over-cap')
    expect(reader.head?.status).toBe(200)
  })

  it('reads a body of exactly the cap, however it is framed', () => {
    const body = 'x'.repeat(RESPONSE_BODY_CAP)
    expect(readIn(`HTTP/1.1 200 OK\r\ncontent-length: ${RESPONSE_BODY_CAP}\r\n\r\n${body}`).outcome).toBe('complete')
    expect(readIn(`HTTP/1.1 200 OK\r\n\r\n${body}`).outcome).toBe('more')
    const chunked = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${RESPONSE_BODY_CAP.toString(16)}\r\n${body}\r\n0\r\n\r\n`
    expect(readIn(chunked).outcome).toBe('complete')
    expect(readIn(chunked, [200, 30_000]).outcome).toBe('complete')
  })

  it('takes a head, trailers and a chunk-size line of exactly their limits', () => {
    const head = 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\nx: '
    const full = `${head}${'a'.repeat(MAX_HEAD_BYTES - head.length)}\r\n\r\n`
    expect(readIn(full).outcome).toBe('complete')
    expect(() => readIn(`${head}${'a'.repeat(MAX_HEAD_BYTES - head.length + 1)}\r\n\r\n`)).toThrow(/head is over/)
    // Trailers of 16,384 bytes with the empty line that ends them: 2,047 lines of 8, one of 6, and 2.
    const trailers = `${'x-t: 1\r\n'.repeat(2_047)}x: 1\r\n\r\n`
    expect(readIn(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n${trailers}`).outcome).toBe('complete')
    expect(() => readIn(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\nz${trailers}`)).toThrow(/trailers/)
    const reader = new ResponseReader()
    reader.read(Buffer.from('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n'))
    expect(reader.read(Buffer.from('0'.repeat(4_096)))).toBe('more')
    expect(() => reader.read(Buffer.from('0'))).toThrow(/line of its chunked body is over 4096 bytes/)
  })
})

describe('ResponseReader: a refusal kept for an error to show (keepRefusal)', () => {
  const REFUSED =
    'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nX-Request-Id: 7\r\ncontent-length: 24\r\n\r\n' +
    '{"error":"bad writeKey"}'
  const text = (head: { body?: Uint8Array[] | undefined } | undefined) =>
    Buffer.concat(head?.body ?? []).toString('latin1')

  it('keeps the reason phrase, every header field as sent and the body, however the connection splits it', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 140 }), { maxLength: 10 }), (cuts) => {
        const { reader, outcome } = readIn(REFUSED, cuts, 1024)
        expect(outcome).toBe('complete')
        expect(reader.head).toMatchObject({
          status: 400,
          statusText: 'Bad Request',
          fields: [
            ['Content-Type', 'application/json'],
            ['X-Request-Id', '7'],
            ['content-length', '24'],
          ],
        })
        expect(text(reader.head)).toBe('{"error":"bad writeKey"}')
      }),
    )
  })

  it('keeps at most the bytes it was asked for, and reads no further (chunked, by length and to the end)', () => {
    const chunked = readIn(CHUNKED, [], 8)
    expect(chunked.outcome).toBe('over-cap')
    expect(text(chunked.reader.head)).toBe('hello wo')
    const byLength = readIn(REFUSED, [90, 100], 5)
    expect(byLength.outcome).toBe('over-cap')
    expect(text(byLength.reader.head)).toBe('{"err')
    const toEnd = readIn('HTTP/1.1 500 Oops\r\n\r\nall of it', [], 4)
    expect(text(toEnd.reader.head)).toBe('all ')
  })

  it('keeps nothing of a 2xx, nor of anything when not asked', () => {
    expect(readIn(OK, [], 1024).reader.head).toMatchObject({ status: 200, ...NOTHING_KEPT })
    expect(readIn(REFUSED).reader.head).toMatchObject({ status: 400, ...NOTHING_KEPT })
  })

  it('a status line with no reason phrase: an empty one', () => {
    expect(readIn('HTTP/1.1 503\r\ncontent-length: 0\r\n\r\n', [], 10).reader.head?.statusText).toBe('')
  })
})
