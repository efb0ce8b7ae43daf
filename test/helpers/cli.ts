import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Changes } from './changes.js'

/**
 * Bundled once per test run by test/global-setup.ts: inside the repository, where its package
 * imports resolve to node_modules, and outside node_modules, where Node resolves `eventwire/...`
 * to this package's own entries (a self-reference), as from an installed package.
 */
export const CLI_BUNDLE = fileURLToPath(new URL('../../.cache/eventwire-test/cli.mjs', import.meta.url))

/** Environment for plain-text assertions: no colours, whatever the CI sets. */
export function plainEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extra }
  delete env['FORCE_COLOR']
  for (const name of ['EVENTWIRE_WRITE_KEY', 'EVENTWIRE_ENDPOINT', 'EVENTWIRE_SECRET'])
    if (!(name in extra)) delete env[name]
  return env
}

/** Arguments of `eventwire send track`: event `E` by user `u1` to an endpoint with a write key, then `flags`. */
export function sendTrackArgs(endpoint: string, writeKey: string, ...flags: string[]): string[] {
  return ['send', 'track', '--endpoint', endpoint, '--write-key', writeKey, '--user', 'u1', '--event', 'E', ...flags]
}

/** A running `eventwire` process with its stdout split into lines. */
export interface CliProcess {
  readonly child: ChildProcess
  readonly lines: string[]
  stderr(): string
  /** Resolves with the first stdout line (already seen or to come) that matches. */
  waitFor(predicate: (line: string) => boolean, timeoutMs?: number): Promise<string>
  /** Stdout lines that are JSON objects, parsed. */
  records(): Array<Record<string, unknown>>
  /** Resolves with the first JSON record that matches. */
  waitForRecord(
    predicate: (record: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>
  /** Sends a signal (SIGINT: Ctrl+C) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
  readonly exited: Promise<number | null>
}

const parse = (line: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(line)
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

export async function startCli(args: readonly string[], env: NodeJS.ProcessEnv = plainEnv()): Promise<CliProcess> {
  const child = spawn(process.execPath, [CLI_BUNDLE, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  const changes = new Changes()
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line)
    changes.notify()
  })
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  const waitFor = (predicate: (line: string) => boolean, timeoutMs = 10_000) =>
    changes.until(
      () => lines.find(predicate),
      timeoutMs,
      () => `no matching line within ${timeoutMs} ms; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`,
    )
  const records = () => lines.map(parse).filter((record) => record !== undefined)
  return {
    child,
    lines,
    stderr: () => stderr,
    waitFor,
    records,
    waitForRecord: async (predicate, timeoutMs) =>
      parse(
        await waitFor((line) => {
          const record = parse(line)
          return record !== undefined && predicate(record)
        }, timeoutMs),
      )!,
    stop: (signal = 'SIGINT') => {
      child.kill(signal)
      return exited
    },
    exited,
  }
}

/** Runs a command to its end. */
export async function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = plainEnv(),
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = await startCli(args, env)
  const code = await cli.exited
  return { code, stdout: cli.lines.join('\n'), stderr: cli.stderr() }
}

/** `eventwire listen --json` on a free port, with its URL. */
export async function startListen(args: readonly string[] = []): Promise<{ cli: CliProcess; url: string }> {
  const cli = await startCli(['listen', '--port', '0', '--json', ...args])
  const listening = await cli.waitForRecord((record) => record['event'] === 'listening')
  return { cli, url: String(listening['url']) }
}

/** `eventwire dev --json` on a free port, with its ingest URL and write key. */
export async function startDev(args: readonly string[]): Promise<{ cli: CliProcess; url: string; writeKey: string }> {
  const cli = await startCli(['dev', '--port', '0', '--json', ...args])
  const listening = await cli.waitForRecord((record) => record['event'] === 'listening')
  return { cli, url: String(listening['url']), writeKey: String(listening['writeKey']) }
}

/** POSTs a batch body (an object, or a raw string) to `eventwire dev` with the write key as basic-auth user. */
export function postBatch(url: string, writeKey: string | undefined, body: unknown, path = '/v1/batch') {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(writeKey === undefined ? {} : { authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}` }),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}
