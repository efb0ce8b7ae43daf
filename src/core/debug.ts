/** Where eventwire writes its log lines. `log` gets debug lines, `error` gets failures nobody listened for. */
export interface Logger {
  log(message: string): void
  error(message: string): void
}

/** Writes to the console, prefixed with the namespace as the `debug` package does. */
export function consoleLogger(namespace: string): Logger {
  // Both to stderr, as the `debug` package writes: stdout stays the program's own output.
  const write = (message: string) => console.error(`  ${namespace} ${message}`)
  return { log: write, error: write }
}

/**
 * `logger` with methods that cannot throw: a logger is the user's code, and a broken one must not
 * break a call, a delivery or its accounting. What it throws is dropped, since the logger is where
 * it would have been reported.
 */
export function guardLogger(logger: Logger): Logger {
  const guarded = (method: keyof Logger) => (message: string) => {
    try {
      logger[method](message)
    } catch {}
  }
  return { log: guarded('log'), error: guarded('error') }
}

interface HostGlobals {
  process?: { env?: Record<string, string | undefined> }
  Deno?: { env?: { get(name: string): string | undefined } }
  localStorage?: { getItem(key: string): string | null }
}

// Each host can refuse access (Deno without --allow-env, sandboxed storage): that reads as unset.

/** The `debug` convention's setting in a browser: `localStorage.debug`. */
export function readStoredDebugSetting(): string {
  try {
    return (globalThis as HostGlobals).localStorage?.getItem('debug') ?? ''
  } catch {
    return ''
  }
}

/**
 * The `debug` convention's setting on a server runtime: `DEBUG` in the environment (Node, Bun,
 * Deno, Workers with Node compatibility), else `localStorage.debug` (Deno has one).
 */
export function readDebugSetting(): string {
  const host = globalThis as HostGlobals
  try {
    const value = host.process?.env?.['DEBUG']
    if (value !== undefined) return value
  } catch {}
  try {
    const value = host.Deno?.env?.get('DEBUG')
    if (value !== undefined) return value
  } catch {}
  return readStoredDebugSetting()
}

function patternToRegExp(pattern: string): RegExp {
  const source = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*?')
  return new RegExp(`^${source}$`)
}

/**
 * Whether logging for `namespace` is on under the `debug` package's rules: a comma or space
 * separated list of names, `*` as a wildcard, and `-name` to exclude.
 */
export function isDebugEnabled(namespace: string, setting: string): boolean {
  let enabled = false
  for (const name of setting.split(/[\s,]+/)) {
    if (name === '') continue
    if (name.startsWith('-')) {
      if (patternToRegExp(name.slice(1)).test(namespace)) return false
    } else if (patternToRegExp(name).test(namespace)) {
      enabled = true
    }
  }
  return enabled
}
