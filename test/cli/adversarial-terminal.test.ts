// What the network can put on the operator's terminal through the CLI: nothing that acts. Every
// control character (C0, DEL, C1, bidi overrides) from a request is shown as its escape.
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import type { DevActivity } from '../../src/cli/dev/activity.js'
import { formatActivity } from '../../src/cli/dev/format.js'
import { renderDashboard } from '../../src/cli/dev/live-view.js'
import { DevStats } from '../../src/cli/dev/stats.js'
import { formatRequest } from '../../src/cli/listen/format.js'
import type { ReceivedRequest } from '../../src/cli/listen/receiver.js'
import { escapeControl, writeJsonLine } from '../../src/cli/terminal.js'
import { postBatch, startCli, type CliProcess } from '../helpers/cli.js'
import { startOnTerminal, type TerminalCli } from '../helpers/terminal.js'
import { startSink, type Sink } from '../helpers/sink.js'

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/
// Our own styling, when colours are on: the only escape sequences the CLI may write itself.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the styles removed here.
const withoutStyles = (text: string) => text.replace(/\u001b\[\d+(;\d+)*m/g, '')
/** Every line of pretty output must be free of control characters (bar its own styles and line breaks). */
const assertInert = (text: string) => {
  for (const line of withoutStyles(text).split('\n')) expect(line).not.toMatch(CONTROL)
}

const TITLE = '\u001b]0;pwned\u0007'
const CLEAR = '\u001b[2J'
const hostile = `${TITLE}${CLEAR}\u009b31m\u202eevil\u2066`

const controlCharacter = fc
  .oneof(
    fc.integer({ min: 0, max: 0x1f }),
    fc.constant(0x7f),
    fc.integer({ min: 0x80, max: 0x9f }),
    fc.integer({ min: 0x202a, max: 0x202e }),
    fc.integer({ min: 0x2066, max: 0x2069 }),
  )
  .map((code) => String.fromCharCode(code))
const hostileText = fc
  .array(fc.oneof(fc.string(), controlCharacter, fc.string({ unit: 'grapheme' })), { maxLength: 12 })
  .map((parts) => parts.join(''))

describe('escapeControl', () => {
  it('lets no control character through, whatever the text', () => {
    fc.assert(fc.property(hostileText, (text) => !CONTROL.test(escapeControl(text))))
  })

  it('shows each one visibly, and leaves other text as it is', () => {
    expect(escapeControl(TITLE)).toBe('\\x1b]0;pwned\\x07')
    expect(escapeControl(`a\u202eb\u0085c\u007f\n`)).toBe('a\\u202eb\\x85c\\x7f\\x0a')
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => CONTROL.test(text) || escapeControl(text) === text),
    )
  })
})

describe('pretty output of what the network sent', () => {
  const request = (payload: unknown, path = '/hooks'): ReceivedRequest =>
    ({
      time: Date.now(),
      method: 'POST',
      path,
      signature: 'unchecked',
      status: 200,
      payload,
      senderHungUp: false,
    }) as unknown as ReceivedRequest

  it('listen: every field of any event, and the path', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('track', 'page', 'screen', 'group', 'alias', 'identify', hostile),
        hostileText,
        hostileText,
        (type, a, b) => {
          const payload = {
            type,
            userId: a,
            event: b,
            name: b,
            groupId: a,
            'Previous ID': a,
            'User ID': b,
            properties: { [a]: b },
            traits: { [b]: a },
          }
          assertInert(formatRequest(request(payload, `/${a}`), 120))
          assertInert(formatRequest(request(a, `/${b}`), 120))
        },
      ),
    )
  })

  it('dev: log lines and the live view, for every kind of activity', () => {
    fc.assert(
      fc.property(hostileText, hostileText, (a, b) => {
        const activities: DevActivity[] = [
          {
            event: 'delivered',
            eventId: a,
            type: 'page',
            userId: a,
            label: b,
            attempts: 1,
            urls: [{ url: 'http://127.0.0.1:1/', status: 'delivered', attempts: 1, lastStatus: 200 }],
          },
          { event: 'failed', eventId: a, type: 'track', userId: b, label: a, attempts: 1, urls: [] },
          { event: 'unroutable', eventId: a, type: 'identify', userId: a, reason: b },
          { event: 'rejected', status: 404, code: 'ERR_NOT_FOUND', reason: `nothing at /${a}` },
          {
            event: 'retry',
            eventId: a,
            url: 'http://127.0.0.1:1/',
            attempts: 1,
            error: 'ERR_HTTP_STATUS',
            status: 500,
            retryAt: new Date().toISOString(),
          },
        ]
        const lines = activities.map((activity) => formatActivity(activity))
        for (const line of lines) assertInert(line)
        const stats = new DevStats(['http://127.0.0.1:1/'])
        stats.record({ event: 'rejected', status: 404, code: 'ERR_NOT_FOUND', reason: `nothing at /${b}` })
        assertInert(renderDashboard(stats, 'banner', lines, 100))
      }),
    )
  })

  it('--json lines: JSON-escaped, C1 and bidi controls included, and the same value', () => {
    fc.assert(
      fc.property(hostileText, (text) => {
        let written = ''
        writeJsonLine({ write: (chunk: string) => (written += chunk) } as never, { text })
        expect(written.slice(0, -1)).not.toMatch(CONTROL)
        expect(JSON.parse(written)).toEqual({ text })
      }),
    )
  })
})

const running: Array<{ stop(): Promise<unknown> }> = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((item) => item.stop()))
})

async function cli(args: readonly string[]): Promise<CliProcess> {
  const started = await startCli(args)
  running.push(started)
  return started
}

async function hook(): Promise<Sink> {
  const sink = await startSink()
  running.push({ stop: () => sink.close() })
  return sink
}

describe('end to end: a request carrying terminal escapes', () => {
  it('eventwire listen prints it escaped', async () => {
    const listen = await cli(['listen', '--port', '0'])
    const banner = await listen.waitFor((line) => line.startsWith('eventwire listen: receiving'))
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(banner)![0]
    const body = JSON.stringify({ type: 'track', userId: TITLE, event: CLEAR, properties: { note: hostile } })
    expect(
      (
        await fetch(`${url}/${encodeURIComponent(TITLE)}`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(200)
    await fetch(`${url}/x`, { method: 'POST', body: `not json ${TITLE}` })
    await listen.waitFor((line) => line.includes('(not JSON)'))
    const output = listen.lines.join('\n')
    assertInert(output)
    // The event name is quoted as JSON, so its escape is JSON's.
    expect(output).toContain('"\\u001b[2J" by \\x1b]0;pwned\\x07')
  })

  it('eventwire dev prints user ids and page names escaped, in log lines and refusals', async () => {
    const sink = await hook()
    const dev = await cli(['dev', '--port', '0', '--webhook', sink.url, '--write-key', 'wk'])
    const banner = await dev.waitFor((line) => line.startsWith('eventwire dev: ingest API on'))
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(banner)![0]
    await postBatch(url, 'wk', {
      batch: [
        { type: 'page', userId: TITLE, name: CLEAR },
        { type: 'track', userId: hostile, event: TITLE },
      ],
    })
    await postBatch(url, 'wk', {}, `/${TITLE}`)
    await dev.waitFor((line) => line.includes('track') && line.includes('delivered:'))
    await dev.waitFor((line) => line.includes('refused 404'))
    const output = dev.lines.join('\n')
    assertInert(output)
    expect(output).toContain('page \\x1b[2J (\\x1b]0;pwned\\x07) delivered')
  })

  it('the live view of eventwire dev keeps its title and screen', async () => {
    const sink = await hook()
    const terminal: TerminalCli = startOnTerminal(
      ['dev', '--port', '0', '--webhook', sink.url, '--write-key', 'wk'],
      { columns: 140, rows: 40 },
      { ...process.env, NO_COLOR: '1' },
    )
    running.push({ stop: () => terminal.close() })
    const titles: string[] = []
    terminal.terminal.onTitleChange((title) => titles.push(title))
    const screen = await terminal.waitForScreen((text) => /http:\/\/127\.0\.0\.1:\d+\/v1\/batch/.test(text))
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(screen)![0]
    await postBatch(url, 'wk', { batch: [{ type: 'page', userId: TITLE, name: CLEAR }] })
    const after = await terminal.waitForScreen((text) => text.includes('delivered:'))
    expect(after).toContain('page \\x1b[2J (\\x1b]0;pwned\\x07) delivered')
    expect(after).toContain('eventwire dev: ingest API on')
    expect(titles).toEqual([])
  })
})
