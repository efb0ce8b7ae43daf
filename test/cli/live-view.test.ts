import { afterEach, describe, expect, it } from 'vitest'
import { plainEnv, postBatch, startListen, type CliProcess } from '../helpers/cli.js'
import { startOnTerminal, type TerminalCli } from '../helpers/terminal.js'

const rowOf = (text: string, url: string) => text.split('\n').find((line) => line.startsWith(url)) ?? ''
const cells = (row: string) => row.trim().split(/\s+/).slice(1)

/** Whether the first cell of the first line starting with `text` is drawn dim. */
function isDim(cli: TerminalCli, text: string): boolean {
  const buffer = cli.terminal.buffer.active
  for (let row = 0; row < buffer.length; row++) {
    const line = buffer.getLine(row)
    if (line?.translateToString(true).startsWith(text)) return (line.getCell(0)?.isDim() ?? 0) !== 0
  }
  throw new Error(`no line starts with ${text}`)
}

let listen: CliProcess | undefined
let dev: TerminalCli | undefined
afterEach(async () => {
  await dev?.close()
  await listen?.stop()
  dev = listen = undefined
})

describe('eventwire dev on a terminal', () => {
  it('draws the live view in place and updates it as events are received, delivered, retried and refused', async () => {
    const receiver = await startListen(['--secret', 's3cret'])
    listen = receiver.cli
    const up = `${receiver.url}/up`
    const down = 'http://127.0.0.1:9/down'
    // Colours as a user at an xterm gets them: decided by the terminal, whatever the test runs
    // under. Node reads TERM, and turns colours off when CI is set (as .ci/run sets it); keys are
    // deleted, not set to undefined, because node-pty would pass undefined on as text.
    const env: NodeJS.ProcessEnv = { ...plainEnv(), TERM: 'xterm-256color' }
    for (const name of ['NO_COLOR', 'CI', 'TMUX']) delete env[name]
    dev = startOnTerminal(
      [
        'dev',
        '--port',
        '0',
        '--write-key',
        'wk',
        '--secret',
        's3cret',
        '--mode',
        'each',
        '--webhook',
        up,
        '--webhook',
        down,
      ],
      { columns: 150, rows: 40 },
      env,
    )

    const first = await dev.waitForScreen((text) => text.includes('waiting for the first batch'))
    const url = /ingest API on (http:\/\/127\.0\.0\.1:\d+)\/v1\/batch/.exec(first)![1]!
    expect(first).toContain('received 0 event(s) in 0 batch(es)')
    expect(cells(rowOf(first, up))).toEqual(['0', '0', '0', '0.0', '-'])
    expect(isDim(dev, 'recent')).toBe(true)

    await postBatch(url, 'wk', {
      batch: [
        { type: 'track', userId: 'u1', event: 'Signed Up' },
        { type: 'identify', userId: 'u1', traits: { plan: 'pro' } },
        { type: 'track', userId: 'u2', event: 'Signed Up' },
      ],
    })
    const second = await dev.waitForScreen(
      (text) => cells(rowOf(text, up))[0] === '3' && cells(rowOf(text, down))[1] === '3',
    )
    expect(second).toContain('received 3 event(s) in 1 batch(es)')
    expect(cells(rowOf(second, up))).toEqual(['3', '0', '0', expect.stringMatching(/^\d+\.\d$/), '200'])
    expect(Number(cells(rowOf(second, up))[3])).toBeGreaterThan(0)
    expect(cells(rowOf(second, down))).toEqual(['0', '3', '0', '0.0', 'ERR_NETWORK'])
    expect(second).toMatch(/← batch of 3 event\(s\)/)
    expect(second).toMatch(/↻ \S+ → http:\/\/127\.0\.0\.1:9\/down ERR_NETWORK \(attempt 1\)/)

    await postBatch(url, 'wk', { batch: [{ type: 'track', userId: 'u3', event: 'Upgraded' }] })
    await postBatch(url, 'wk', { batch: [{ type: 'track', userId: 'u3' }] })
    const third = await dev.waitForScreen((text) => cells(rowOf(text, up))[0] === '4' && text.includes('last refused'))
    expect(third).toContain('received 4 event(s) in 2 batch(es)')
    expect(third).toContain('refused 1')
    expect(third).toContain('last refused: 400 ERR_MISSING_EVENT: batch[0]: track() needs a non-empty `event`.')
    // Redrawn in place: one banner and one row per URL in all the terminal holds, however many frames were drawn.
    expect(third.split('eventwire dev: ingest API on').length - 1).toBe(1)
    expect(third.split('\n').filter((line) => line.startsWith(up))).toHaveLength(1)

    dev.type('\x03')
    const last = await dev.waitForScreen((text) => text.includes('eventwire dev: 4 event(s) received'))
    expect(last).toContain(
      'eventwire dev: 4 event(s) received in 2 batch(es), 1 request(s) refused; 0 delivered, 4 failed, 0 skipped, 0 not forwarded',
    )
    expect(await dev.exited).toEqual({ exitCode: 0, signal: 0 })
    expect(dev.screen().split('eventwire dev: ingest API on').length - 1).toBe(1)
  })
})
