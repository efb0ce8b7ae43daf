import { execFileSync } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE, postBatch, startListen, type CliProcess } from '../helpers/cli.js'

// Drives `eventwire dev` on a real terminal: tmux gives it a pseudo-terminal of a fixed size, and
// capture-pane returns the screen as a user sees it (escape sequences applied, colours dropped).
const session = `eventwire-live-${process.pid}`
const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' })
const screen = () => tmux('capture-pane', '-p', '-t', session)

async function waitForScreen(predicate: (text: string) => boolean, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const text = screen()
    if (predicate(text)) return text
    if (Date.now() > deadline) throw new Error(`the screen never matched; last screen:\n${text}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const rowOf = (text: string, url: string) => text.split('\n').find((line) => line.startsWith(url)) ?? ''
const cells = (row: string) => row.trim().split(/\s+/).slice(1)

let listen: CliProcess | undefined
afterEach(async () => {
  try {
    tmux('kill-session', '-t', session)
  } catch {
    // already gone
  }
  await listen?.stop()
})

describe('eventwire dev on a terminal', () => {
  it('draws the live view in place and updates it as events are received, delivered, retried and refused', async () => {
    const receiver = await startListen(['--secret', 's3cret'])
    listen = receiver.cli
    const up = `${receiver.url}/up`
    const down = 'http://127.0.0.1:9/down'
    tmux('new-session', '-d', '-s', session, '-x', '150', '-y', '40', process.execPath, CLI_BUNDLE, 'dev', '--port', '0', '--write-key', 'wk', '--secret', 's3cret', '--mode', 'each', '--webhook', up, '--webhook', down)
    tmux('set-option', '-t', session, 'remain-on-exit', 'on')

    const first = await waitForScreen((text) => text.includes('waiting for the first batch'))
    const url = /ingest API on (http:\/\/127\.0\.0\.1:\d+)\/v1\/batch/.exec(first)![1]!
    expect(first).toContain('received 0 event(s) in 0 batch(es)')
    expect(cells(rowOf(first, up))).toEqual(['0', '0', '0', '0.0', '-'])

    await postBatch(url, 'wk', {
      batch: [
        { type: 'track', userId: 'u1', event: 'Signed Up' },
        { type: 'identify', userId: 'u1', traits: { plan: 'pro' } },
        { type: 'track', userId: 'u2', event: 'Signed Up' },
      ],
    })
    const second = await waitForScreen((text) => cells(rowOf(text, up))[0] === '3' && cells(rowOf(text, down))[1] === '3')
    expect(second).toContain('received 3 event(s) in 1 batch(es)')
    expect(cells(rowOf(second, up))).toEqual(['3', '0', '0', expect.stringMatching(/^\d+\.\d$/), '200'])
    expect(Number(cells(rowOf(second, up))[3])).toBeGreaterThan(0)
    expect(cells(rowOf(second, down))).toEqual(['0', '3', '0', '0.0', 'ERR_NETWORK'])
    expect(second).toMatch(/← batch of 3 event\(s\)/)
    expect(second).toMatch(/↻ \S+ → http:\/\/127\.0\.0\.1:9\/down ERR_NETWORK \(attempt 1\)/)

    await postBatch(url, 'wk', { batch: [{ type: 'track', userId: 'u3', event: 'Upgraded' }] })
    await postBatch(url, 'wk', { batch: [{ type: 'track', userId: 'u3' }] })
    const third = await waitForScreen((text) => cells(rowOf(text, up))[0] === '4' && text.includes('last refused'))
    expect(third).toContain('received 4 event(s) in 2 batch(es)')
    expect(third).toContain('refused 1')
    expect(third).toContain('last refused: 400 ERR_MISSING_EVENT: batch[0]: track() needs a non-empty `event`.')
    // Redrawn in place: one banner and one row per URL, however many frames were drawn.
    expect(third.split('eventwire dev: ingest API on').length - 1).toBe(1)
    expect(third.split('\n').filter((line) => line.startsWith(up))).toHaveLength(1)

    tmux('send-keys', '-t', session, 'C-c')
    const last = await waitForScreen((text) => text.includes('eventwire dev: 4 event(s) received'))
    expect(last).toContain('eventwire dev: 4 event(s) received in 2 batch(es), 1 request(s) refused; 0 delivered, 4 failed, 0 skipped, 0 not forwarded')
    expect(tmux('display-message', '-p', '-t', session, '#{pane_dead} #{pane_dead_status}').trim()).toBe('1 0')
  })
})
