import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { isDebugEnabled } from '../../src/core/debug.js'
import { startSink } from '../helpers/sink.js'

describe('the DEBUG setting (debug package convention)', () => {
  it.each<[string, boolean]>([
    ['analytics', true],
    ['*', true],
    ['analytics*', true],
    ['express,analytics', true],
    ['express analytics', true],
    ['', false],
    ['express', false],
    ['analytic', false],
    ['*,-analytics', false],
    ['analytics,-analytics', false],
  ])('DEBUG=%j turns analytics logging %s', (setting, enabled) => {
    expect(isDebugEnabled('analytics', setting)).toBe(enabled)
  })
})

/** Runs a client in a child process with the given environment and returns its standard error. */
async function runChild(env: Record<string, string>): Promise<string> {
  const sink = await startSink((_request, index) => ({ status: index === 0 ? 503 : 200 }))
  const entry = fileURLToPath(new URL('../../src/index.ts', import.meta.url))
  const script = `
    const { Client } = await import(${JSON.stringify(entry)})
    const client = new Client('SECRET-WRITE-KEY', { endpoint: ${JSON.stringify(sink.url)}, retry: { baseDelay: 1 } })
    client.track({ userId: 'u1', event: 'E' })
    await client.close()
  `
  const { DEBUG: _inherited, ...parentEnv } = process.env
  // Not spawnSync: the sink lives in this process and must keep answering.
  const child = await new Promise<{ stderr: string; status: number | null }>((resolve) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...parentEnv, ...env },
    })
    let stderr = ''
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    proc.on('close', (status) => resolve({ stderr, status }))
  })
  await sink.close()
  expect(child.status).toBe(0)
  return child.stderr
}

describe('runtime logging', () => {
  it('logs batches and retries under DEBUG=analytics, never the write key', async () => {
    const stderr = await runChild({ DEBUG: 'analytics' })
    expect(stderr).toMatch(/analytics sending batch .*1 message\(s\)/)
    expect(stderr).toMatch(/analytics retrying batch .*HTTPError/)
    expect(stderr).toMatch(/analytics batch .* delivered: HTTP 200 after 2 attempt\(s\)/)
    expect(stderr).not.toContain('SECRET-WRITE-KEY')
    expect(stderr).not.toContain(btoa('SECRET-WRITE-KEY:'))
  })

  it('is silent without DEBUG', async () => {
    expect(await runChild({})).toBe('')
  })
})
