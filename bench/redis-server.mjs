// A redis-server of a benchmark's own, on loopback, in a directory of its own; and a free port.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A port nothing listens on now, on 127.0.0.1. */
export async function freePort() {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * Starts redis-server on `port` (a free one when 0) with RDB snapshots off and `args` after
 * (persistence, replication), and resolves once it accepts connections; rejects if it exits
 * first. `stop()` ends it with `signal`, waits for it, and removes its directory.
 */
export async function startRedisServer({ port = 0, args = [], signal = 'SIGTERM' } = {}) {
  const listenOn = port || (await freePort())
  const dir = mkdtempSync(join(tmpdir(), 'eventwire-bench-redis-'))
  const child = spawn(
    'redis-server',
    ['--port', String(listenOn), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no', ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  await new Promise((resolve, reject) => {
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
      if (output.includes('Ready to accept connections')) resolve()
    })
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)))
  })
  child.stdout.resume()
  return {
    port: listenOn,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve).kill(signal))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
