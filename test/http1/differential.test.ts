/**
 * Issue 45: a differential test of ResponseReader (src/http1/response-reader.ts) against
 * Node's own HTTP/1.1 parser, llhttp. Generated responses, valid and broken, are split at random
 * points and fed to both. They must agree on error or not, the final status, whether the response
 * completed, the byte at which it ended, and whether the connection may carry another request.
 * Each way they may differ is a row of KNOWN, with why (a bug of the reader would be marked todo;
 * the four it found are fixed and pinned at the end);
 * any other difference fails the test, which prints the seed and the bytes. A body the reader
 * stops reading at its cap (RESPONSE_BODY_CAP, 'over-cap') differs only if llhttp ended it within
 * the cap. And the reader must read each response alike whole and split.
 *
 * The reference is llhttp in this process, through `node:_http_common`'s HTTPParser. That is the
 * binding node:http's client drives, set up as the client sets it up: a response parser with
 * Node's 16 KiB head limit and no lenient flags (`kLenientNone`, node:http's default without
 * `insecureHTTPParser`). Its hooks do what the client's do. A 1xx other than 101 has no body: the
 * client's parserOnIncomingClient answers 1, skip it. Nor has a 304. At a 101 llhttp stops reading
 * HTTP, and the client, which asked for no upgrade, destroys the socket: an error here, as it is
 * for the reader.
 *
 * Why in-process, and not node:http requests to a raw server on loopback: it is cheap enough for
 * 100,000 responses in a run, and it tells where a response ended, which a socket does not. To
 * find that byte, each parser is fed the response again up to a byte of the chunk in which it
 * said the response was complete, halving the chunk until the first such byte is found.
 *
 * A difference KNOWN explains must also go away once the case is mended: without the bare LF,
 * with the tab made a space, with the bytes after the response cut. Then the rest of the case is
 * compared again, so a row cannot hide another difference in the same bytes.
 *
 * Not generated: heads near the 16 KiB limit (the two count a head's bytes differently, and the
 * reader's unit tests pin its own), and more than a few dozen fields.
 *
 * `DIFFERENTIAL_COUNT` (default 5,000) and `DIFFERENTIAL_SEED` (default 45) choose the run, and
 * `DIFFERENTIAL_CASE=<n>` replays one case of it. A run with DIFFERENTIAL_COUNT set prints what
 * differed, by kind and by row. CONTRIBUTING.md says how to run it in full.
 */
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { RESPONSE_BODY_CAP } from '../../src/core/limits.js'
import { HTTP_PROTOCOL_CODE, MAX_HEAD_BYTES, ResponseReader } from '../../src/http1/response-reader.js'

/** A whole number from the environment, or `fallback` when unset. */
function setting(name: string, fallback: number): number {
  const text = process.env[name]
  if (text === undefined || text === '') return fallback
  const value = Number(text)
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a whole number, not ${text}`)
  return value
}

const DEFAULT_COUNT = 5_000
const DEFAULT_SEED = 45
const COUNT = setting('DIFFERENTIAL_COUNT', DEFAULT_COUNT)
const SEED = setting('DIFFERENTIAL_SEED', DEFAULT_SEED)
const ONLY = process.env['DIFFERENTIAL_CASE'] ? setting('DIFFERENTIAL_CASE', 0) : undefined
const REPORT = process.env['DIFFERENTIAL_COUNT'] !== undefined || ONLY !== undefined

// ---------------------------------------------------------------------------------------------
// The reference: llhttp, through node:http's binding.

interface ParseError extends Error {
  readonly code: string
  readonly reason: string
  readonly bytesParsed: number
}

interface NodeParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void
  execute(chunk: Buffer): number | ParseError
  finish(): ParseError | undefined
  [hook: number]: unknown
}

interface NodeParserClass {
  new (): NodeParser
  readonly RESPONSE: number
  readonly kOnHeadersComplete: number
  readonly kOnBody: number
  readonly kOnMessageComplete: number
  readonly kLenientNone: number
}

const { HTTPParser } = createRequire(import.meta.url)('node:_http_common') as { HTTPParser: NodeParserClass }

/** What llhttp said of the final response while fed. */
class NodeState {
  status: number | undefined = undefined
  version: string | undefined = undefined
  keepAlive = false
  bodyBytes = 0
  /** The final response completed (or a 101 ended HTTP): what follows is not this response. */
  done = false
  switched = false
}

const parser = new HTTPParser()
let state = new NodeState()

// The hooks node:http's client sets, reduced to what is compared. Their arguments: major, minor,
// headers, method, url, status, reason, upgrade, shouldKeepAlive.
parser[HTTPParser.kOnHeadersComplete] = (...head: unknown[]): number => {
  const status = head[5] as number
  if (state.done) return 0
  // An interim answer: the client skips its body and waits for the final one.
  if (status >= 100 && status < 200 && status !== 101) return 1
  state.status = status
  state.version = `${head[0]}.${head[1]}`
  state.keepAlive = head[8] === true
  if (status === 101) {
    state.switched = true
    state.done = true
  }
  return status === 304 ? 1 : 0
}
parser[HTTPParser.kOnBody] = (body: Buffer): void => {
  if (!state.done && state.status !== undefined) state.bodyBytes += body.length
}
parser[HTTPParser.kOnMessageComplete] = (): void => {
  // An interim response completes too: only the final one counts.
  if (!state.done && state.status !== undefined) state.done = true
}

/** The ends of the chunks `cuts` splits the first `until` bytes into. */
function boundaries(cuts: readonly number[], until: number): number[] {
  const ends = cuts.filter((cut) => cut > 0 && cut < until)
  ends.push(until)
  return ends
}

interface NodePass {
  readonly state: NodeState
  readonly error: ParseError | undefined
  /** The chunk in which the response completed, or the error came. */
  readonly from: number
  readonly to: number
  readonly byClose: boolean
}

/** Feeds llhttp the first `until` bytes in the chunks `cuts` makes; `close`: then the connection ends. */
function feedNode(bytes: Buffer, cuts: readonly number[], until: number, close: boolean): NodePass {
  state = new NodeState()
  parser.initialize(HTTPParser.RESPONSE, {}, MAX_HEAD_BYTES, HTTPParser.kLenientNone)
  let from = 0
  for (const to of boundaries(cuts, until)) {
    const result = parser.execute(bytes.subarray(from, to))
    if (state.done) return { state, error: undefined, from, to, byClose: false }
    if (typeof result !== 'number') return { state, error: result, from, to, byClose: false }
    from = to
  }
  if (close) parser.finish()
  return { state, error: undefined, from, to: until, byClose: state.done }
}

// ---------------------------------------------------------------------------------------------
// Verdicts: what each parser made of a response.

type Kind = 'complete' | 'incomplete' | 'error' | 'over-cap'

interface Verdict {
  readonly kind: Kind
  /** The final head's status, once read. */
  readonly status: number | undefined
  /** Complete: the offset just past the response's last byte. */
  readonly end: number | undefined
  /** Complete: by the connection's end (a body delimited by close). */
  readonly byClose: boolean
  /** Complete: the connection may carry another request. */
  readonly reusable: boolean
  /** Error: what the parser said (llhttp: its code and reason). */
  readonly why: string
  /** llhttp's error: the offset where it stopped. */
  readonly at: number | undefined
  /** llhttp: bytes of the final response's body. */
  readonly bodyBytes: number
  /** llhttp: the final head's version. */
  readonly version: string | undefined
}

function verdict(kind: Kind, fields: Partial<Verdict>): Verdict {
  return {
    kind,
    status: undefined,
    end: undefined,
    byClose: false,
    reusable: false,
    why: '',
    at: undefined,
    bodyBytes: 0,
    version: undefined,
    ...fields,
  }
}

/** The smallest `e` in `[low, high]` for which `done(e)`, given `done(high)` and that it stays so after. */
function firstDone(low: number, high: number, done: (e: number) => boolean): number {
  let [lo, hi] = [low, high]
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (done(mid)) hi = mid
    else lo = mid + 1
  }
  return hi
}

function nodeVerdict(bytes: Buffer, cuts: readonly number[]): Verdict {
  const pass = feedNode(bytes, cuts, bytes.length, true)
  const { status, version, bodyBytes, keepAlive } = pass.state
  if (pass.state.switched) return verdict('error', { status, version, why: 'a 101 ends HTTP/1.1 on the connection' })
  if (pass.error !== undefined) {
    const at = pass.from + pass.error.bytesParsed
    return verdict('error', { status, version, why: `${pass.error.code}: ${pass.error.reason}`, at })
  }
  if (!pass.state.done) return verdict('incomplete', { status, version, bodyBytes })
  if (pass.byClose) return verdict('complete', { status, version, bodyBytes, end: bytes.length, byClose: true })
  const end = firstDone(pass.from + 1, pass.to, (e) => feedNode(bytes, cuts, e, false).state.done)
  return verdict('complete', { status, version, bodyBytes, end, reusable: keepAlive })
}

interface OursPass {
  readonly reader: ResponseReader
  readonly outcome: 'more' | 'complete' | 'over-cap' | 'error'
  readonly why: string
  /** The chunk in which the outcome came. */
  readonly from: number
  readonly to: number
}

/** Feeds the reader the first `until` bytes in the chunks `cuts` makes, as a connection does. */
function feedOurs(bytes: Buffer, cuts: readonly number[], until: number): OursPass {
  const reader = new ResponseReader()
  let from = 0
  for (const to of boundaries(cuts, until)) {
    try {
      const outcome = reader.read(bytes.subarray(from, to))
      if (outcome !== 'more') return { reader, outcome, why: '', from, to }
    } catch (error) {
      // Only a protocol error is an answer; anything else is a bug the test must show.
      if ((error as { code?: unknown }).code !== HTTP_PROTOCOL_CODE) throw error
      const why = (error as Error).message.replace("the receiver's response is not valid HTTP/1.1: ", '')
      return { reader, outcome: 'error', why, from, to }
    }
    from = to
  }
  return { reader, outcome: 'more', why: '', from, to: until }
}

function oursVerdict(bytes: Buffer, cuts: readonly number[]): Verdict {
  const pass = feedOurs(bytes, cuts, bytes.length)
  const status = pass.reader.head?.status
  switch (pass.outcome) {
    case 'error':
      return verdict('error', { status, why: pass.why })
    case 'over-cap':
      return verdict('over-cap', { status })
    case 'complete': {
      const end = firstDone(pass.from + 1, pass.to, (e) => feedOurs(bytes, cuts, e).outcome === 'complete')
      return verdict('complete', { status, end, reusable: pass.reader.reusable })
    }
    case 'more':
      if (!pass.reader.ended()) return verdict('incomplete', { status })
      return verdict('complete', { status, end: bytes.length, byClose: true, reusable: pass.reader.reusable })
  }
}

// ---------------------------------------------------------------------------------------------
// The generator: a seeded stream per case, so that a case is replayed from the seed and its number.

class Random {
  #state: number

  constructor(seed: number) {
    this.#state = seed >>> 0
  }

  /** In [0, 1): a Weyl sequence through the MurmurHash3 finalizer. */
  next(): number {
    this.#state = (this.#state + 0x9e3779b9) >>> 0
    let z = this.#state
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
    return ((z ^ (z >>> 16)) >>> 0) / 2 ** 32
  }

  /** In [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n)
  }

  /** In [low, high]. */
  between(low: number, high: number): number {
    return low + this.below(high - low + 1)
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)] as T
  }

  /** One of `choices`, each as likely as its weight. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    let left = this.next() * choices.reduce((sum, [weight]) => sum + weight, 0)
    for (const [weight, value] of choices) {
      left -= weight
      if (left < 0) return value
    }
    return (choices[choices.length - 1] as readonly [number, T])[1]
  }
}

/** What part of a response a range of its bytes is. */
type RegionKind =
  | 'prelude'
  | 'interim'
  | 'status-line'
  | 'field'
  | 'head-end'
  | 'chunk-size'
  | 'chunk-data'
  | 'chunk-end'
  | 'trailers'
  | 'body'
  | 'after'

/** A part of a response: `from` to `to` in its bytes. A field is one line, with its line end. */
interface Region {
  readonly kind: RegionKind
  readonly from: number
  readonly to: number
}

interface Case {
  readonly index: number
  readonly bytes: Buffer
  readonly cuts: readonly number[]
  /** The parts, in order, covering the bytes as generated (a response cut short covers fewer). */
  readonly regions: readonly Region[]
}

class Writer {
  text = ''
  readonly regions: Region[] = []

  add(kind: RegionKind, text: string): void {
    this.regions.push({ kind, from: this.text.length, to: this.text.length + text.length })
    this.text += text
  }
}

type LineEnd = () => string

/** CRLF, or bare LF throughout, or a mix: RFC 9112 section 2.2 lets a recipient take LF alone. */
function lineEnds(r: Random): LineEnd {
  const style = r.weighted([
    [92, 'crlf'],
    [4, 'lf'],
    [4, 'mixed'],
  ] as const)
  if (style === 'crlf') return () => '\r\n'
  if (style === 'lf') return () => '\n'
  return () => (r.chance(0.25) ? '\n' : '\r\n')
}

/** A field name as a receiver may case it. */
function cased(r: Random, name: string): string {
  switch (r.below(5)) {
    case 0:
      return name.toLowerCase()
    case 1:
      return name.toUpperCase()
    case 2:
      return [...name].map((c) => (r.chance(0.5) ? c.toUpperCase() : c.toLowerCase())).join('')
    default:
      return name
  }
}

const BODY_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789 \r\n:;/-HTTP'

function bodyText(r: Random, length: number): string {
  if (length > 4_000) return 'x'.repeat(length)
  let text = ''
  while (text.length < length) {
    // Now and then what looks like framing, to catch a parser reading a body as a head or a chunk.
    if (r.chance(0.02)) text += r.pick(['HTTP/1.1 200 OK\r\n\r\n', '0\r\n\r\n', '\r\n\r\n', '5\r\nhello\r\n'])
    else text += BODY_ALPHABET[r.below(BODY_ALPHABET.length)]
  }
  return text.slice(0, length)
}

function bodyLength(r: Random): number {
  return r.weighted([
    [70, () => r.between(0, 64)],
    [24, () => r.between(65, 2_000)],
    [5, () => r.between(2_001, 20_000)],
    [1, () => RESPONSE_BODY_CAP + r.between(-2, 2)],
  ] as const)()
}

const VERSIONS_ODD = [
  'HTTP/1.2',
  'HTTP/2.0',
  'HTTP/0.9',
  'HTTP/2',
  'http/1.1',
  'HTTP/11',
  'HTTP/1.1 ',
  'RTSP/1.0',
  'ICE/1.0',
  'HTTP/1.x',
  'HTTP/3.0',
  ' HTTP/1.1',
  'HTTP/1.01',
]
const STATUSES = [
  200, 200, 200, 201, 202, 204, 206, 301, 302, 304, 400, 401, 403, 404, 408, 410, 413, 429, 500, 502, 503,
]
const STATUSES_ODD = ['000', '099', '600', '999', '101', '20', '2000', '2x0', '1000', ' 200', '-20']
const REASONS = [
  ' OK',
  ' OK',
  ' OK',
  '',
  ' ',
  ' Not Found',
  ' Some  reason, with spaces',
  ' \xe9t\xe9 \xff',
  ' tab\there',
  ' ctl\x01\x7f',
  'OK',
  ' reason: with a colon',
  ' HTTP/1.1 200 OK',
]

/** Lines a head may hold that are not fields as RFC 9112 allows them. */
const BROKEN_LINES = [
  ' folded',
  '\tfolded too',
  'just text',
  ': no name',
  'X Foo: 1',
  'x@y: 1',
  '"quoted": 1',
  'x(y): 1',
  'na\xe9me: 1',
  'x\x01y: 1',
  'x-v: a\x01b',
  'x-v: a\x7fb',
  'x-v: a\x00b',
  'x-v: a\rb',
  'x-empty:',
]

const INTERIM_FIELDS = [
  'link: </a.css>; rel=preload',
  'x-interim: 1',
  'content-length: 5',
  'transfer-encoding: chunked',
  'connection: close',
]

function interimHead(r: Random, w: Writer, eol: LineEnd): void {
  const version = r.pick(['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'])
  const status = r.pick([100, 100, 102, 103, 150, 199])
  let head = `${version} ${status}${r.pick([' Continue', ' Early Hints', '', ' '])}${eol()}`
  for (let n = r.below(3); n > 0; n--) head += `${r.pick(INTERIM_FIELDS)}${eol()}`
  if (r.chance(0.05)) head += `${r.pick(BROKEN_LINES)}${eol()}`
  w.add('interim', head + eol())
}

const CONTENT_LENGTHS_ODD = [
  (n: number) => `+${n}`,
  (n: number) => `-${n}`,
  (n: number) => `${n}, ${n}`,
  (n: number) => `${n} ${n}`,
  (n: number) => `0x${n.toString(16)}`,
  () => '',
  (n: number) => `${n}.0`,
  (n: number) => `${n}abc`,
  () => '1e3',
  () => String(RESPONSE_BODY_CAP + 1),
  () => '99999999999',
  () => '100000000000000',
  () => '1000000000000000',
  () => '99999999999999999',
  () => '1234567890123456789012345',
  (n: number) => `00${n}`,
]

const CHUNKED_CODINGS = [
  'chunked',
  'chunked',
  'chunked',
  'Chunked',
  'CHUNKED',
  'gzip, chunked',
  'gzip,chunked',
  ' chunked',
  'chunked ',
  ',chunked',
  'chunked, chunked',
]
const OTHER_CODINGS = ['gzip', 'identity', 'chunked, gzip', 'chunked;q=1', 'xchunked', 'chunked,', '', 'gzip, deflate']
const CONNECTIONS = [
  'close',
  'close',
  'keep-alive',
  'keep-alive',
  'Keep-Alive',
  'CLOSE',
  'close, keep-alive',
  'keep-alive, close',
  'upgrade',
  'foo, close',
  'closed',
  'x-close',
  'close;x',
  'TE, close',
  'keep-alive , foo',
  '',
]
const OTHER_FIELDS: readonly (readonly [string, string])[] = [
  ['Content-Type', 'application/json'],
  ['Date', 'Tue, 01 Dec 2026 10:00:00 GMT'],
  ['Server', 'nginx'],
  ['Retry-After', '30'],
  ['Set-Cookie', 'a=b; Path=/'],
  ['Vary', 'Accept-Encoding'],
  ['Keep-Alive', 'timeout=5, max=100'],
  // Names near those the reader reads, which it must not take for them.
  ['Content-Lengths', '5'],
  ['X-Content-Length', '5'],
  ['Content-Lengt', '5'],
  ['Transfer-Encodings', 'chunked'],
  ['Proxy-Connection', 'close'],
]

/** A field's value with optional whitespace around it, which is not part of it. */
function padded(r: Random, value: string): string {
  if (r.chance(0.8)) return ` ${value}`
  return `${r.pick(['', '  ', '\t'])}${value}${r.pick(['', ' ', '\t ', '  '])}`
}

/** A chunked body: chunks, the last chunk, trailers. */
function chunkedBody(r: Random, w: Writer, eol: LineEnd): void {
  const chunks = r.weighted([
    [10, 0],
    [40, 1],
    [30, 2],
    [20, r.between(3, 6)],
  ] as const)
  for (let n = chunks; n > 0; n--) {
    const size = r.weighted([
      [90, () => r.between(1, 100)],
      [9, () => r.between(101, 5_000)],
      [1, () => r.between(30_000, 70_000)],
    ] as const)()
    let hex = size.toString(16)
    if (r.chance(0.3)) hex = hex.toUpperCase()
    if (r.chance(0.1))
      hex =
        '0'.repeat(
          r.weighted([
            [9, r.between(1, 3)],
            [1, r.between(4, 9)],
          ] as const),
        ) + hex
    let line = hex
    if (r.chance(0.2)) line += r.pick([';a=b', ';a', ';a="x y"', '; a=b', ';a=b;c', ';', ' ;a', ' ', '\t'])
    // Past the reader's line limit, 4,096 bytes, and within llhttp's.
    else if (r.chance(0.02)) line += `;x=${'e'.repeat(r.between(4_500, 14_000))}`
    if (r.chance(0.02))
      line = r.pick(['zz', '-5', '0x5', '', ' 5', '5 x', '1_0', '+5', 'FFFFFFFFF', 'FFFFFFF', '123456789'])
    w.add('chunk-size', line + eol())
    const data = r.chance(0.02) ? size + r.pick([-1, 1]) : size
    w.add('chunk-data', bodyText(r, Math.max(0, data)))
    w.add('chunk-end', r.chance(0.02) ? r.pick(['', 'X', '\r', '\rX', ' \r\n', '\n\n']) : eol())
  }
  w.add('chunk-size', r.pick(['0', '0', '0', '000', '0;done']) + eol())
  let trailers = ''
  if (r.chance(0.15))
    for (let n = r.between(1, 2); n > 0; n--)
      trailers += `${r.pick(['x-trailer: 1', 'Expires: 0', 'x-checksum: abc'])}${eol()}`
  if (r.chance(0.05)) trailers += `x-long-trailer: ${'v'.repeat(r.between(4_500, 14_000))}${eol()}`
  if (r.chance(0.02)) trailers += `${r.pick(BROKEN_LINES)}${eol()}`
  w.add('trailers', trailers + eol())
}

/** The final response: status line, fields, and a body framed as its plan says, or not quite. */
function finalResponse(r: Random, w: Writer, eol: LineEnd): void {
  const version = r.weighted([
    [75, 'HTTP/1.1'],
    [20, 'HTTP/1.0'],
    [5, r.pick(VERSIONS_ODD)],
  ] as const)
  const status = r.weighted([
    [85, String(r.pick(STATUSES))],
    [12, String(r.between(200, 599))],
    [3, r.pick(STATUSES_ODD)],
  ] as const)
  w.add('status-line', `${version} ${status}${r.pick(REASONS)}${eol()}`)

  const fields: [string, string][] = []
  const plan = r.weighted([
    [45, 'length'],
    [30, 'chunked'],
    [12, 'close'],
    [7, 'coded'],
    [6, 'both'],
  ] as const)
  const declared = bodyLength(r)
  if (plan === 'length' || plan === 'both') {
    const value = r.chance(0.08) ? r.pick(CONTENT_LENGTHS_ODD)(declared) : String(declared)
    fields.push(['Content-Length', value])
    if (r.chance(0.05)) fields.push(['Content-Length', r.chance(0.6) ? value : String(declared + 1)])
  }
  if (plan === 'chunked' || plan === 'both') {
    if (r.chance(0.05)) fields.push(['Transfer-Encoding', 'gzip'], ['Transfer-Encoding', 'chunked'])
    else fields.push(['Transfer-Encoding', r.pick(CHUNKED_CODINGS)])
    // An empty one after: the codings are then "chunked, " (RFC 9110 section 5.3).
    if (r.chance(0.03)) fields.push(['Transfer-Encoding', ''])
  }
  if (plan === 'coded') {
    if (r.chance(0.1)) fields.push(['Transfer-Encoding', 'chunked'], ['Transfer-Encoding', 'gzip'])
    else fields.push(['Transfer-Encoding', r.pick(OTHER_CODINGS)])
    if (r.chance(0.2)) fields.push(['Content-Length', String(declared)])
  }
  if (r.chance(0.45)) fields.push(['Connection', r.pick(CONNECTIONS)])
  if (r.chance(0.05)) fields.push(['Connection', r.pick(CONNECTIONS)])
  for (let n = r.below(5); n > 0; n--) {
    const [name, value] = r.chance(0.1) ? (['X-Long', 'v'.repeat(r.between(100, 800))] as const) : r.pick(OTHER_FIELDS)
    fields.push([name, value])
  }
  // Shuffled: the order of fields must not matter.
  for (let i = fields.length - 1; i > 0; i--) {
    const j = r.below(i + 1)
    ;[fields[i], fields[j]] = [fields[j] as [string, string], fields[i] as [string, string]]
  }
  for (const [name, value] of fields) {
    // Whitespace between a name and its colon: RFC 9112 section 5.1 forbids it.
    const beforeColon = r.chance(0.015) ? r.pick([' ', '\t']) : ''
    w.add('field', `${cased(r, name)}${beforeColon}:${padded(r, value)}${eol()}`)
  }
  if (r.chance(0.06)) w.add('field', r.pick(BROKEN_LINES) + eol())
  w.add('head-end', eol())

  // A 204 or 304 has no body: now and then one comes anyway, and is bytes after the response.
  if ((status === '204' || status === '304') && r.chance(0.7)) return
  if (plan === 'chunked' || (plan === 'both' && r.chance(0.8))) chunkedBody(r, w, eol)
  else {
    // About what was declared: now and then less (the connection then ends early) or more. A body
    // to the close is short, or about the cap.
    const length = r.weighted([
      [90, declared],
      [5, Math.max(0, declared - r.between(1, 10))],
      [5, declared + r.between(1, 10)],
    ] as const)
    const toClose = r.chance(0.03) ? RESPONSE_BODY_CAP + r.between(-2, 2) : Math.min(length, 300)
    w.add('body', bodyText(r, plan === 'length' ? length : toClose))
  }
}

const AFTER = [
  'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n',
  'x',
  '\r\n',
  '\n',
  '\x00',
  'garbage bytes',
  '0\r\n\r\n',
  ' ',
]

/** Where the connection splits a response of `length` bytes into chunks. */
function cutsOf(r: Random, length: number): number[] {
  if (length < 2) return []
  const how = r.weighted([
    [10, 'none'],
    [60, 'few'],
    [25, 'many'],
    [5, 'bytes'],
  ] as const)
  if (how === 'none') return []
  if (how === 'bytes' && length <= 400) return Array.from({ length: length - 1 }, (_, i) => i + 1)
  const count = how === 'few' ? r.between(1, 4) : r.between(5, 20)
  const cuts = new Set<number>()
  for (let n = 0; n < count; n++) cuts.add(r.between(1, length - 1))
  return [...cuts].sort((a, b) => a - b)
}

function generate(index: number): Case {
  // A stream of its own per case: one is replayed from the seed and its number alone.
  const r = new Random(Math.imul(SEED + 1, 0x2545f491) ^ Math.imul(index + 1, 0x9e3779b1))
  for (let warm = 0; warm < 4; warm++) r.next()
  const w = new Writer()
  const eol = lineEnds(r)
  // What an HTTP/2-only server sends first: its SETTINGS frame.
  if (r.chance(0.005)) w.add('prelude', '\x00\x00\x12\x04\x00\x00\x00\x00\x00')
  else {
    if (r.chance(0.01)) w.add('prelude', r.pick(['\r\n', '\n']))
    if (r.chance(0.1)) for (let n = r.between(1, 2); n > 0; n--) interimHead(r, w, eol)
    finalResponse(r, w, eol)
  }
  if (r.chance(0.12)) w.add('after', r.pick(AFTER))
  let bytes = Buffer.from(w.text, 'latin1')
  // The connection ends early, anywhere.
  if (r.chance(0.15)) bytes = bytes.subarray(0, r.below(bytes.length))
  return { index, bytes, cuts: cutsOf(r, bytes.length), regions: w.regions }
}

// ---------------------------------------------------------------------------------------------
// Comparing.

interface Compared {
  readonly c: Case
  readonly ours: Verdict
  readonly node: Verdict
  /** What they differ on, by kind; empty when they agree. */
  readonly found: readonly string[]
}

function differences(ours: Verdict, node: Verdict): string[] {
  if (ours.kind === 'over-cap') {
    // The reader stops at the cap where llhttp reads on: only a body llhttp ended within it contradicts.
    if (node.status === undefined) return [`ours over-cap, llhttp ${node.kind}`]
    if (node.status !== ours.status) return ['status']
    return node.kind === 'complete' && node.bodyBytes <= RESPONSE_BODY_CAP ? ['over-cap within the cap'] : []
  }
  if (ours.kind !== node.kind) return [`ours ${ours.kind}, llhttp ${node.kind}`]
  if (ours.kind === 'error') return []
  const found: string[] = []
  if (ours.status !== node.status) found.push('status')
  if (ours.kind === 'complete') {
    if (ours.end !== node.end) found.push('end')
    else if (ours.byClose !== node.byClose) found.push('by close')
    if (ours.reusable !== node.reusable) found.push('reusable')
  }
  return found
}

function compare(c: Case): Compared {
  const ours = oursVerdict(c.bytes, c.cuts)
  const node = nodeVerdict(c.bytes, c.cuts)
  return { c, ours, node, found: differences(ours, node) }
}

/** A case mended, and where each offset of the case before is in it (`undefined`: in an edit). */
interface Mended {
  readonly c: Case
  readonly moved: (offset: number) => number | undefined
}

/** Whether the reader read a case and its mended version alike. */
function readAlike(before: Verdict, after: Verdict, moved: Mended['moved']): boolean {
  if (before.kind !== after.kind || before.status !== after.status) return false
  if (before.reusable !== after.reusable || before.byClose !== after.byClose) return false
  return before.end === undefined ? after.end === undefined : moved(before.end) === after.end
}

const LF = 10
const CR = 13

/** The regions of `c` as far as its bytes reach. */
function regionsOf(c: Case): Region[] {
  return c.regions
    .filter((region) => region.from < c.bytes.length || region.from === 0)
    .map((region) => ({ ...region, to: Math.min(region.to, c.bytes.length) }))
}

/** The region holding byte `offset`. */
function regionAt(c: Case, offset: number | undefined): Region | undefined {
  if (offset === undefined) return undefined
  return c.regions.find((region) => region.from <= offset && offset < region.to)
}

/** The text of `region`, as far as the bytes reach. */
function textOf(c: Case, region: Region): string {
  return c.bytes.toString('latin1', region.from, Math.min(region.to, c.bytes.length))
}

/** `c` with each region's text replaced by `edit`'s; `undefined` when nothing changed. */
function edited(c: Case, edit: (region: Region, text: string) => string): Mended | undefined {
  const w = new Writer()
  const before = regionsOf(c)
  let changed = false
  for (const region of before) {
    const text = textOf(c, region)
    const next = edit(region, text)
    changed ||= next !== text
    w.add(region.kind, next)
  }
  if (!changed) return undefined
  const after = w.regions
  const moved = (offset: number) => {
    const i = before.findIndex((region) => region.from <= offset && offset <= region.to)
    const [old, now] = [before[i], after[i]]
    if (old === undefined || now === undefined) return undefined
    if (offset === old.from) return now.from
    if (offset === old.to) return now.to
    // Inside a region: only one whose length did not change keeps its offsets.
    return old.to - old.from === now.to - now.from ? now.from + offset - old.from : undefined
  }
  return { c: { index: c.index, bytes: Buffer.from(w.text, 'latin1'), cuts: [], regions: after }, moved }
}

/** `c` with bytes `from` to `to` replaced by `text`. */
function spliced(c: Case, from: number, to: number, text: string): Mended {
  const delta = text.length - (to - from)
  const at = (offset: number) => (offset <= from ? offset : offset >= to ? offset + delta : from + text.length)
  const bytes = Buffer.concat([c.bytes.subarray(0, from), Buffer.from(text, 'latin1'), c.bytes.subarray(to)])
  const regions = regionsOf(c).map((region) => ({ kind: region.kind, from: at(region.from), to: at(region.to) }))
  const moved = (offset: number) => (offset <= from ? offset : offset >= to ? offset + delta : undefined)
  return { c: { index: c.index, bytes, cuts: [], regions }, moved }
}

/** The line holding byte `offset`: its first byte, and its LF (or the end of the bytes). */
function lineAt(bytes: Buffer, offset: number): [number, number] {
  const end = bytes.indexOf(LF, offset)
  return [bytes.lastIndexOf(LF, offset - 1) + 1, end < 0 ? bytes.length : end]
}

/**
 * Where the bare LF is that llhttp stopped at or just after, if it did. When it says a CR was
 * expected, the byte before the LF may be a CR it took as data (a chunk of the wrong size).
 */
function bareLfAt({ c, node }: Compared): number | undefined {
  if (node.at === undefined) return undefined
  const expected = node.why.startsWith('HPE_CR_EXPECTED')
  return [node.at - 1, node.at].find((at) => c.bytes[at] === LF && (expected || c.bytes[at - 1] !== CR))
}

/** The final head's field lines, with their line ends. */
function fieldLines(c: Case): string[] {
  return c.regions.filter((region) => region.kind === 'field').map((region) => textOf(c, region))
}

/** A field line's name as written (whitespace before the colon kept), lowercased. */
function nameOf(line: string): string {
  const colon = line.indexOf(':')
  return (colon < 0 ? line : line.slice(0, colon)).toLowerCase()
}

/** A field line's value, optional whitespace kept, line end dropped (or the CR it was cut after). */
function rawValueOf(line: string): string {
  return line.slice(line.indexOf(':') + 1).replace(/\r?\n$|\r$/, '')
}

/** The fields the reader reads; it skips every other. */
const READ_FIELDS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'retry-after'])

/** The final head's field llhttp stopped in, if it did. */
function fieldAt({ c, node }: Compared): Region | undefined {
  const region = regionAt(c, node.at)
  return region?.kind === 'field' ? region : undefined
}

/** `c` without the line llhttp stopped in. */
function withoutLineAt({ c, node }: Compared): Mended | undefined {
  if (node.at === undefined) return undefined
  const [from, to] = lineAt(c.bytes, node.at)
  return spliced(c, from, Math.min(to + 1, c.bytes.length), '')
}

/**
 * A way the reader and llhttp differ by design, or by a bug of the reader (`todo`) or of llhttp.
 * `applies` says whether a case differs in this way, from what each said and where. `mend`, when
 * there is one, takes the cause out of the case: the mended case must then agree, or be explained
 * by other rows. With `readsAlike`, the reader must read the mended case as it read the case:
 * it took the thing as RFC 9112 allows, or as if it were not there, and only llhttp minded.
 * Mends work where llhttp stopped, or on the head's lines: past a chunk of the wrong size, the
 * generator's idea of what is data and what is framing is no longer the parsers'.
 */
interface Known {
  readonly name: string
  /** How the two differ here, and which is right. */
  readonly why: string
  /** Set on a bug of the reader: what to fix. Its it.fails pin below turns red once it is fixed. */
  readonly todo?: string
  readonly applies: (x: Compared) => boolean
  readonly mend?: (x: Compared) => Mended | undefined
  readonly readsAlike?: true
}

/** llhttp refused what the reader took. */
const onlyLlhttpRefused = (x: Compared) => x.node.kind === 'error' && x.ours.kind !== 'error'

/** Both read the same complete response, and only llhttp would carry another request on the connection. */
const onlyLlhttpReuses = ({ ours, node }: Compared) =>
  ours.kind === 'complete' && node.kind === 'complete' && ours.end === node.end && !ours.reusable && node.reusable

const KNOWN: readonly Known[] = [
  {
    name: 'a bare LF ends a line',
    why:
      'RFC 9112 section 2.2: a recipient MAY take a bare LF as a line end. The reader does, in heads and in the ' +
      'chunked framing, since nothing a client decides depends on the CR; llhttp refuses it without its lenient flag.',
    applies: (x) => onlyLlhttpRefused(x) && bareLfAt(x) !== undefined,
    mend: (x) => {
      const lf = bareLfAt(x) as number
      return spliced(x.c, lf, lf, '\r')
    },
    readsAlike: true,
  },
  {
    name: 'a bare CR inside a line',
    why:
      'RFC 9112 section 2.2: a recipient of a bare CR MUST take its element as invalid, or replace the CR with SP. ' +
      'The reader keeps it in the line, which is the same as a space to every field it reads (a value is trimmed, ' +
      'and one with a CR inside matches nothing); llhttp refuses the response.',
    applies: (x) =>
      onlyLlhttpRefused(x) &&
      /HPE_LF_EXPECTED|Expected LF after CR/.test(x.node.why) &&
      x.c.bytes[(x.node.at ?? 0) - 1] === CR,
    mend: ({ c, node }) => spliced(c, (node.at ?? 0) - 1, node.at ?? 0, ' '),
    readsAlike: true,
  },
  {
    name: 'a tab beside a field value (llhttp misreads it)',
    why:
      'RFC 9110 section 5.6.3: optional whitespace is spaces and tabs, and not part of the value. llhttp 9.3 ' +
      '(Node 20.20) drops only spaces after a value: to it "chunked<TAB>" is another coding (the body then ' +
      'runs to the close), "close<TAB>" is not close, and "5<TAB>" is no Content-Length. The reader trims both.',
    applies: (x) =>
      fieldLines(x.c).some((line) => READ_FIELDS.has(nameOf(line)) && /^[ \t]*\t|\t[ \t]*$/.test(rawValueOf(line))),
    mend: ({ c }) =>
      edited(c, (region, text) =>
        region.kind === 'field' && READ_FIELDS.has(nameOf(text))
          ? text.replace(
              /(:[ \t]*)(.*?)([ \t]*)(\r?\n|\r)?$/s,
              (_, lead: string, value: string, trail: string, eol = '') =>
                `${lead.replaceAll('\t', ' ')}${value}${trail.replaceAll('\t', ' ')}${eol}`,
            )
          : text,
      ),
    readsAlike: true,
  },
  {
    name: 'Proxy-Connection (llhttp reads it as Connection)',
    why:
      'Proxy-Connection is no HTTP field: no RFC defines it, and RFC 9110 section 7.6.1 puts connection options ' +
      'in Connection. llhttp keeps an old habit of http_parser and takes its close. The reader ignores it, and ' +
      'reuses a connection the receiver said nothing against.',
    applies: (x) =>
      x.ours.reusable && !x.node.reusable && fieldLines(x.c).some((line) => nameOf(line).trim() === 'proxy-connection'),
    mend: ({ c }) =>
      edited(c, (region, text) =>
        region.kind === 'field' ? text.replace(/^proxy-connection/i, 'X-Proxy-Connectio') : text,
      ),
    readsAlike: true,
  },
  {
    name: 'an interim head that would close (HTTP/1.0, or Connection: close)',
    why:
      "A 1xx is interim (RFC 9110 section 15.2): the final response that follows decides the connection's " +
      'future. llhttp applies the close to the interim message itself and refuses the final head after it, so ' +
      "Node's client fails the request; the reader skips interim heads whole.",
    applies: (x) =>
      onlyLlhttpRefused(x) && x.node.why.startsWith('HPE_CLOSED_CONNECTION') && x.node.status === undefined,
    mend: ({ c }) =>
      edited(c, (region, text) =>
        region.kind === 'interim'
          ? text.replace(/^HTTP\/1\.0/, 'HTTP/1.1').replace(/^connection: close(\r?\n)/im, 'x-interim: 2$1')
          : text,
      ),
    readsAlike: true,
  },
  {
    name: 'interim heads are skipped unread',
    why:
      'The reader looks at a 1xx head only for its status: its fields frame nothing (a 1xx has no body) and ' +
      'decide nothing. llhttp parses them, and refuses a malformed one.',
    applies: (x) => onlyLlhttpRefused(x) && regionAt(x.c, x.node.at)?.kind === 'interim',
    mend: withoutLineAt,
    readsAlike: true,
  },
  {
    name: 'trailers are skipped unread',
    why:
      'RFC 9112 section 7.1.2 lets a recipient discard trailer fields, and RFC 9110 section 6.5.1 keeps framing ' +
      'fields out of them. The reader counts their bytes against its limit and reads only where they end; ' +
      'llhttp parses them, and refuses a malformed one or a Content-Length among them.',
    // A field llhttp refused after the final head: a trailer, malformed or one that would frame.
    applies: (x) =>
      onlyLlhttpRefused(x) &&
      x.node.status !== undefined &&
      (x.node.why.startsWith('HPE_INVALID_HEADER_TOKEN') || /can't be present with/.test(x.node.why)),
    mend: withoutLineAt,
    readsAlike: true,
  },
  {
    name: 'what follows a chunk size is skipped',
    why:
      'RFC 9112 section 7.1.1: a recipient MUST ignore chunk extensions it does not know, and it knows none. ' +
      'The reader takes the hex digits and skips the rest of the line (extensions of any form, whitespace); ' +
      'llhttp checks the extension grammar and refuses whitespace after the size.',
    applies: (x) =>
      onlyLlhttpRefused(x) &&
      (x.node.why.startsWith('HPE_INVALID_CHUNK_SIZE') ||
        /^HPE_STRICT: Invalid character in chunk ext/.test(x.node.why)),
    mend: ({ c, node }) => {
      const [from, to] = lineAt(c.bytes, node.at ?? 0)
      const line = c.bytes.toString('latin1', from, to)
      const size = /^[0-9a-f]+/i.exec(line)?.[0]
      // The CR that ends the line stays.
      const end = line.endsWith('\r') ? to - 1 : to
      return size === undefined ? undefined : spliced(c, from + size.length, end, '')
    },
    readsAlike: true,
  },
  {
    name: 'fields the reader does not read go unchecked',
    why:
      'The reader reads five fields (Content-Length, Transfer-Encoding, Connection, Keep-Alive, Retry-After) ' +
      'and skips the others whole, their names and values unchecked: nothing they hold changes the framing or ' +
      'the answer. llhttp refuses a name that is not a token and a value with a control byte.',
    applies: (x) => {
      const field = fieldAt(x)
      return onlyLlhttpRefused(x) && field !== undefined && !READ_FIELDS.has(nameOf(textOf(x.c, field)).trim())
    },
    mend: (x) => {
      const field = fieldAt(x) as Region
      return spliced(x.c, field.from, field.to, '')
    },
    readsAlike: true,
  },
  {
    name: 'the same Content-Length twice',
    why:
      'RFC 9110 section 8.6: a recipient of Content-Length fields with one value repeated may reject the ' +
      'message or take that value. The reader takes it (and refuses the one-field list "5, 5", as llhttp ' +
      'does); llhttp refuses any second Content-Length.',
    applies: (x) => onlyLlhttpRefused(x) && x.node.why.includes('Duplicate Content-Length'),
    mend: ({ c }) => {
      let seen = false
      return edited(c, (region, text) => {
        if (region.kind !== 'field' || nameOf(text) !== 'content-length') return text
        if (!seen) {
          seen = true
          return text
        }
        return ''
      })
    },
    readsAlike: true,
  },
  {
    name: 'Transfer-Encoding beside Content-Length',
    why:
      'RFC 9112 section 6.3: Transfer-Encoding overrides Content-Length, and such a message ought to be handled ' +
      'as an error, its connection closed after. The reader frames by Transfer-Encoding and never reuses the ' +
      'connection; llhttp refuses the response.',
    applies: (x) => onlyLlhttpRefused(x) && /can't be present with/.test(x.node.why) && !x.ours.reusable,
    mend: ({ c }) =>
      edited(c, (region, text) => (region.kind === 'field' && nameOf(text) === 'content-length' ? '' : text)),
  },
  {
    name: 'an empty Transfer-Encoding',
    why:
      'RFC 9112 section 6.3: with Transfer-Encoding present and chunked not its final coding, the body runs to ' +
      'the close. The reader takes the last coding of the last Transfer-Encoding line, so an empty line (alone, ' +
      'or after "chunked") reads the body to the close and the connection is not reused. llhttp ignores an ' +
      'empty field and frames by the others. The reader reads more than it needs, never less. On a 204 or 304 ' +
      'beside a Content-Length, both framings are present to the reader, and it does not reuse the connection.',
    applies: (x) =>
      x.ours.kind !== 'error' &&
      !x.ours.reusable &&
      (x.ours.kind !== 'complete' || x.ours.byClose || x.ours.status === 204 || x.ours.status === 304) &&
      fieldLines(x.c).some((line) => nameOf(line) === 'transfer-encoding' && rawValueOf(line).trim() === ''),
    mend: ({ c }) =>
      edited(c, (region, text) =>
        region.kind === 'field' && nameOf(text) === 'transfer-encoding' && rawValueOf(text).trim() === '' ? '' : text,
      ),
  },
  {
    name: 'bytes after the response',
    why:
      'Nothing was asked for them: the reader takes the connection as not fit for another request, where ' +
      'llhttp would read them as the next response. A connection with bytes after a response is closed.',
    applies: (x) => onlyLlhttpReuses(x) && (x.ours.end ?? 0) < x.c.bytes.length,
    mend: ({ c, ours }) => ({ c: { ...c, bytes: c.bytes.subarray(0, ours.end), cuts: [] }, moved: (offset) => offset }),
  },
  {
    name: 'a final status other than 2xx',
    why:
      'Only a 2xx leaves the connection open for another request: a receiver that refuses a request and then ' +
      'writes a stray 200 on the connection would have that 200 read as the next answer, and a refused event ' +
      'reported delivered. llhttp keeps any response the receiver keeps alive.',
    applies: (x) => onlyLlhttpReuses(x) && (x.ours.status ?? 0) >= 300,
  },
  {
    name: 'Connection: close beside keep-alive, on HTTP/1.0',
    why:
      'RFC 9112 section 9.6: close means the connection closes after this response, whatever else the field ' +
      "says. llhttp lets HTTP/1.0's keep-alive win; the reader lets close win, on either version.",
    applies: (x) =>
      onlyLlhttpReuses(x) &&
      x.node.version === '1.0' &&
      fieldLines(x.c).some(
        (line) =>
          nameOf(line) === 'connection' &&
          rawValueOf(line)
            .split(',')
            .some((option) => option.trim().toLowerCase() === 'close'),
      ),
  },
  {
    name: 'an empty line before the status line',
    why:
      'RFC 9112 section 2.2 has a server skip empty lines before a request line; nothing lets a client skip ' +
      'them before a status line. The reader refuses them; llhttp skips them either way.',
    applies: (x) => x.ours.why === 'the status line is ""' && x.node.kind !== 'error',
    mend: ({ c }) => edited(c, (region, text) => (region.kind === 'prelude' && /^\r?\n$/.test(text) ? '' : text)),
  },
  {
    name: 'a version other than HTTP/1.0 and HTTP/1.1',
    why:
      'eventwire sends HTTP/1.1, and RFC 9112 section 2.3 has the answer in major version 1. The reader refuses ' +
      'HTTP/0.9, HTTP/2.0, RTSP/1.0 and ICE/1.0 status lines; llhttp takes them.',
    applies: (x) =>
      x.ours.why.startsWith('the status line is "') &&
      !x.ours.why.startsWith('the status line is "HTTP/1.0 ') &&
      !x.ours.why.startsWith('the status line is "HTTP/1.1 ') &&
      x.node.kind !== 'error',
  },
  {
    name: 'a status outside 100-599',
    why:
      'RFC 9110 section 15: a status outside 100-599 is invalid. The reader fails the attempt as it does a ' +
      'broken response (to be retried, as a 5xx would be); llhttp takes any three digits.',
    applies: (x) => /^status \d{3} is outside 100-599$/.test(x.ours.why) && x.node.kind !== 'error',
  },
  {
    name: 'a Content-Length of 16 digits or more',
    why:
      'Past 15 digits a length is no longer an exact number in JavaScript, and far past any cap: the reader ' +
      'refuses it where llhttp, reading up to 2^64, waits for the body.',
    applies: (x) => /^Content-Length is "\d{16,}"$/.test(x.ours.why) && x.node.kind !== 'error',
  },
  {
    name: 'a chunk-size or trailer line over 4,096 bytes',
    why:
      'The reader holds at most 4,096 bytes of a line of the chunked framing: no receiver needs a longer chunk ' +
      'extension or trailer to answer a webhook. llhttp allows 16 KiB of each, and waits where the reader ' +
      'refuses a line that long cut short by the connection.',
    applies: (x) => /^a line of its chunked body is over/.test(x.ours.why) && x.node.kind !== 'error',
  },
  {
    name: 'a line is judged once it has ended',
    why:
      'The reader reads a head when its empty line arrives, and a chunk-size line at its LF; llhttp refuses a ' +
      'bad byte as it comes. A connection that ends in the middle of a bad head or line leaves the reader ' +
      'waiting (incomplete) where llhttp had refused; ended there, both refuse it.',
    applies: ({ c, ours, node }) =>
      ours.kind === 'incomplete' &&
      node.kind === 'error' &&
      // In the head, or in the line the reader holds: no line end after where llhttp stopped.
      ((ours.status === undefined && node.status === undefined) || !c.bytes.includes(LF, node.at)),
    // The cut line ended, and the head with it (a CR it was cut after ends the line with it).
    mend: ({ c }) => {
      const bytes = Buffer.concat([c.bytes, Buffer.from(c.bytes.at(-1) === CR ? '\n\r\n' : '\r\n\r\n')])
      const ended: Region = { kind: 'head-end', from: c.bytes.length, to: bytes.length }
      return { c: { index: c.index, bytes, cuts: [], regions: [...regionsOf(c), ended] }, moved: (offset) => offset }
    },
  },
]

/** The rows that explain all `x`'s differences, the first row first; `undefined` when none do. */
function explain(x: Compared, depth = 0): Known[] | undefined {
  if (x.found.length === 0) return []
  // A response of bare LFs takes a mend per line.
  if (depth === 64) return undefined
  for (const row of KNOWN) {
    if (!row.applies(x)) continue
    if (row.mend === undefined) return [row]
    const mended = row.mend(x)
    if (mended === undefined) continue
    const y = compare(mended.c)
    // Both read whole: the mended case has no cuts (and the reader reads alike however split).
    const before = x.c.cuts.length === 0 ? x.ours : oursVerdict(x.c.bytes, [])
    if (row.readsAlike && !readAlike(before, y.ours, mended.moved)) continue
    const rest = explain(y, depth + 1)
    if (rest !== undefined) return [row, ...rest]
  }
  return undefined
}

/** A response's bytes, JSON-escaped; a long one with its middle left out (the seed and case replay it whole). */
function printable(bytes: Buffer): string {
  const text = bytes.toString('latin1')
  if (text.length <= 1_500) return JSON.stringify(text)
  const left = text.length - 1_300
  return `${JSON.stringify(text.slice(0, 1_000))} ...${left} bytes... ${JSON.stringify(text.slice(-300))}`
}

/** A case as a failure prints it: enough to see it, and to replay it. */
function shown(x: Compared, what: string): string {
  const brief = (v: Verdict) =>
    JSON.stringify({
      kind: v.kind,
      status: v.status,
      end: v.end,
      byClose: v.byClose,
      reusable: v.reusable,
      why: v.why,
      at: v.at,
    })
  return [
    `case ${x.c.index} of seed ${SEED} (DIFFERENTIAL_SEED=${SEED} DIFFERENTIAL_CASE=${x.c.index}): ${what}`,
    `  bytes:  ${printable(x.c.bytes)}`,
    `  cuts:   ${x.c.cuts.length === x.c.bytes.length - 1 ? 'after every byte' : JSON.stringify(x.c.cuts)}`,
    `  ours:   ${brief(x.ours)}`,
    `  llhttp: ${brief(x.node)}`,
  ].join('\n')
}

interface Run {
  readonly cases: number
  readonly ms: number
  /** Cases by what they differed on ('agree' and the kind when they did not). */
  readonly kinds: Map<string, number>
  /** Cases each row of KNOWN explained (a case may need several). */
  readonly rows: Map<Known, number>
  readonly unexplained: string[]
  /** The reader read a case differently whole and split: a bug no row may explain. */
  readonly splitDependent: string[]
}

let done: Run | undefined

/** The generated cases, compared once for every test of this file. */
function run(): Run {
  if (done !== undefined) return done
  const kinds = new Map<string, number>()
  const rows = new Map<Known, number>()
  const unexplained: string[] = []
  const splitDependent: string[] = []
  const start = performance.now()
  const indexes = ONLY === undefined ? Array.from({ length: COUNT }, (_, i) => i) : [ONLY]
  for (const index of indexes) {
    const c = generate(index)
    const x = compare(c)
    const key = x.found.length === 0 ? `agree: ${x.ours.kind}` : x.found.join(' + ')
    kinds.set(key, (kinds.get(key) ?? 0) + 1)
    const explained = new Set<Known>()
    if (c.cuts.length > 0) {
      // Bytes after the response make the connection unfit only when they come with its end: the
      // reader is not given the chunks after it.
      const whole = { ...oursVerdict(c.bytes, []), reusable: x.ours.reusable }
      if (JSON.stringify(whole) !== JSON.stringify(x.ours)) {
        splitDependent.push(shown(x, `whole: ${JSON.stringify(whole)}`))
      }
    }
    if (x.found.length > 0) {
      const path = explain(x)
      if (path === undefined) unexplained.push(shown(x, x.found.join(', ')))
      else for (const row of path) explained.add(row)
    }
    for (const row of explained) rows.set(row, (rows.get(row) ?? 0) + 1)
  }
  done = { cases: indexes.length, ms: performance.now() - start, kinds, rows, unexplained, splitDependent }
  if (REPORT) console.log(report(done))
  return done
}

function report(result: Run): string {
  const lines = [
    `${result.cases} responses, seed ${SEED}, compared in ${Math.round(result.ms)} ms`,
    'by what they differed on:',
  ]
  for (const [key, n] of [...result.kinds].sort((a, b) => b[1] - a[1])) lines.push(`  ${String(n).padStart(7)}  ${key}`)
  lines.push('explained by:')
  for (const row of KNOWN)
    lines.push(`  ${String(result.rows.get(row) ?? 0).padStart(7)}  ${row.todo ? 'TODO ' : ''}${row.name}`)
  lines.push(`unexplained: ${result.unexplained.length}; read differently split: ${result.splitDependent.length}`)
  for (const text of [...result.unexplained, ...result.splitDependent].slice(0, 10)) lines.push(text)
  return lines.join('\n')
}

/** Reads `text` whole, as the unit tests do. */
function readWhole(text: string): { reader: ResponseReader; outcome: string } {
  const reader = new ResponseReader()
  return { reader, outcome: reader.read(Buffer.from(text, 'latin1')) }
}

describe('ResponseReader against llhttp, on generated responses (issue 45)', () => {
  it('holds llhttp to what node:http does: no lenient flags, interim heads skipped, ends found to the byte', () => {
    const chunked = Buffer.from(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\nxyz',
    )
    expect(nodeVerdict(chunked, [7, 30, 60])).toMatchObject({ kind: 'complete', status: 200, end: chunked.length - 3 })
    expect(oursVerdict(chunked, [7, 30, 60])).toMatchObject({ kind: 'complete', status: 200, end: chunked.length - 3 })
    // Strict: a bare LF is refused, as node:http refuses it without insecureHTTPParser.
    expect(nodeVerdict(Buffer.from('HTTP/1.1 200 OK\ncontent-length: 0\n\n'), []).why).toMatch(/^HPE_CR_EXPECTED/)
    expect(nodeVerdict(Buffer.from('HTTP/1.1 200 OK\r\n\r\nto the close'), [])).toMatchObject({
      kind: 'complete',
      byClose: true,
    })
    expect(nodeVerdict(Buffer.from('HTTP/1.1 101 Switching\r\n\r\n'), []).kind).toBe('error')
  })

  const count = ONLY === undefined ? COUNT : 1
  // The comparisons run in whichever test comes first: a millisecond a case, far more than they take.
  const timeout = Math.max(20_000, count)
  it(`agrees with llhttp on ${count} generated responses, but for the differences KNOWN lists`, { timeout }, () => {
    const result = run()
    expect(result.splitDependent, result.splitDependent.slice(0, 5).join('\n')).toEqual([])
    expect(result.unexplained.length, result.unexplained.slice(0, 10).join('\n')).toBe(0)
  })

  // At the default seed and count, or in a long run: a short run of another seed may miss a rare row.
  const coversAll = ONLY === undefined && (COUNT >= 20_000 || (COUNT >= DEFAULT_COUNT && SEED === DEFAULT_SEED))
  it.skipIf(!coversAll)('meets every row of KNOWN: none is there for nothing', { timeout }, () => {
    const result = run()
    expect(KNOWN.filter((row) => !result.rows.has(row)).map((row) => row.name)).toEqual([])
  })

  it.skipIf(ONLY !== undefined)(
    'compares more than errors: in a third, both read a complete response alike, reuse apart',
    { timeout },
    () => {
      const result = run()
      // Reuse apart: the reader closes after any answer but a 2xx, and after bytes past the response.
      const complete = (result.kinds.get('agree: complete') ?? 0) + (result.kinds.get('reusable') ?? 0)
      expect(complete).toBeGreaterThan(result.cases / 3)
    },
  )

  // Bugs of the reader the comparison found, fixed: each was a row of KNOWN marked todo.
  it('refuses a field with whitespace before its colon, as llhttp does', () => {
    // Read now as a field of another name: Content-Length framing, the rest bytes after it.
    const text = 'HTTP/1.1 200 OK\r\nTransfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\n5\r\nhello\r\n0\r\n\r\n'
    expect(() => readWhole(text)).toThrow(expect.objectContaining({ code: HTTP_PROTOCOL_CODE }))
  })

  it('does not reuse a connection after a 204 with Transfer-Encoding and Content-Length', () => {
    const { reader } = readWhole('HTTP/1.1 204 No Content\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n')
    expect(reader.reusable).toBe(false)
  })

  it('holds a long trailer line to its limit alike whole and split across reads', () => {
    const head = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n'
    const bytes = Buffer.from(`${head}x-t: ${'v'.repeat(5_000)}\r\n\r\n`)
    expect(oursVerdict(bytes, []).why).toMatch(/line of its chunked body is over 4096 bytes/)
    expect(oursVerdict(bytes, [head.length + 2_000, head.length + 4_600]).why).toMatch(
      /line of its chunked body is over 4096 bytes/,
    )
    // A head of exactly its limit, a read ending inside its CRLF CRLF: taken, as read whole.
    const start = 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\nx: '
    const limit = Buffer.from(`${start}${'a'.repeat(16_384 - start.length)}\r\n\r\n`)
    expect(oursVerdict(limit, [limit.length - 1]).kind).toBe('complete')
    expect(oursVerdict(limit, [limit.length - 3]).kind).toBe('complete')
  })

  it('reads a chunk size with leading zeros past 8 digits, and a huge one as over the cap', () => {
    const { outcome } = readWhole(
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n000000005\r\nhello\r\n0\r\n\r\n',
    )
    expect(outcome).toBe('complete')
    expect(readWhole('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n100000000\r\nhello').outcome).toBe(
      'over-cap',
    )
    // Past 16 significant digits a size would overflow 64 bits: refused, as llhttp refuses it.
    expect(() => readWhole(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1${'0'.repeat(16)}\r\n`)).toThrow(
      /a chunk size is/,
    )
  })
})
