import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './ports.js'

/** A real redis-server on 127.0.0.1, with its own port and directory. */
export interface RedisServer {
  readonly port: number
  readonly dir: string
  /** Stops the server: SIGTERM by default (with persistence on, it saves first); SIGKILL crashes it. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>
  /** Whether the server process is up. */
  running(): boolean
  /** Starts it again on the same port and directory. */
  restart(): Promise<void>
  /** Stops it and removes its directory. */
  dispose(): Promise<void>
}

/** How a test Redis keeps its data. */
export interface RedisOptions {
  /** Append-only file on: with `appendfsync` (`always` by default), else Redis's default (AOF off). */
  persistent?: boolean
  /** When the append-only file is synced to disk. @defaultValue 'always' */
  appendfsync?: 'always' | 'everysec' | 'no'
  /** Disables the CONFIG command, as managed Redis services do. */
  withoutConfig?: boolean
  /** `maxmemory-policy`, with a `maxmemory` of 4 MB when it is not `noeviction`. @defaultValue Redis's own, noeviction */
  maxmemoryPolicy?: string
  /** The port to listen on. @defaultValue a free one */
  port?: number
  /** More redis-server arguments, after those above (a cluster node's, a replica's). */
  args?: readonly string[]
}

/**
 * Starts redis-server (from Debian's `redis-server` package, which `.ci/run` installs). With
 * `persistent`, every write goes to an append-only file before it is acknowledged.
 */
export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePort())
  const dir = mkdtempSync(join(tmpdir(), 'eventwire-redis-'))
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no']
  if (options.persistent) args.push('--appendonly', 'yes', '--appendfsync', options.appendfsync ?? 'always')
  else args.push('--appendonly', 'no')
  if (options.withoutConfig) args.push('--rename-command', 'CONFIG', '')
  if (options.maxmemoryPolicy !== undefined)
    args.push('--maxmemory-policy', options.maxmemoryPolicy, '--maxmemory', '4mb')
  if (options.args) args.push(...options.args)
  let child: ChildProcess | undefined

  const start = async () => {
    child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise<void>((resolve, reject) => {
      let output = ''
      child?.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes('Ready to accept connections')) resolve()
      })
      child?.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)))
    })
  }
  const stop = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') => {
    const running = child
    if (!running || running.exitCode !== null || running.signalCode !== null) return
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve())
      running.kill(signal)
    })
  }
  await start()
  return {
    port,
    dir,
    stop,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    restart: start,
    dispose: async () => {
      await stop('SIGTERM')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
