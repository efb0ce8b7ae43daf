import { spawn } from '@lydell/node-pty'
import { Terminal } from '@xterm/headless'
import { Changes } from './changes.js'
import { CLI_BUNDLE } from './cli.js'

/** `eventwire` on a pseudo-terminal, with the screen a user would see. */
export interface TerminalCli {
  /** The emulated terminal the output is fed to, for what text cannot tell (colours). */
  readonly terminal: Terminal
  /** Every line the terminal holds, scrolled off or on screen, as text: escape sequences applied, colours dropped. */
  screen(): string
  /** Resolves with the screen once it matches, checked each time the terminal has taken in more output. */
  waitForScreen(predicate: (text: string) => boolean, timeoutMs?: number): Promise<string>
  /** Types keys at the terminal: `'\x03'` is Ctrl+C. */
  type(keys: string): void
  /** Settles once the process has exited and the terminal has taken in all its output. */
  readonly exited: Promise<{ exitCode: number; signal: number | undefined }>
  /** Hangs up (SIGHUP, as closing the window) unless the process has exited; resolves once it has. */
  close(): Promise<void>
}

/**
 * Runs the bundled CLI on a pseudo-terminal (`@lydell/node-pty`) of a fixed size, its output fed
 * to a headless xterm.js, which keeps the screen as a terminal would draw it.
 */
export function startOnTerminal(
  args: readonly string[],
  size: { columns: number; rows: number },
  env: NodeJS.ProcessEnv,
): TerminalCli {
  const terminal = new Terminal({ cols: size.columns, rows: size.rows, scrollback: 1_000, allowProposedApi: true })
  const pty = spawn(process.execPath, [CLI_BUNDLE, ...args], {
    cols: size.columns,
    rows: size.rows,
    env,
    name: 'xterm-256color',
  })
  const changes = new Changes()
  let running = true
  // xterm.js parses asynchronously; the callback runs once this output is on its screen.
  pty.onData((data) => terminal.write(data, () => changes.notify()))
  // node-pty reports the exit after the last output is read; the empty write waits for it to be parsed.
  const exited = new Promise<{ exitCode: number; signal: number | undefined }>((resolve) =>
    pty.onExit(({ exitCode, signal }) => {
      running = false
      terminal.write('', () => resolve({ exitCode, signal }))
    }),
  )
  const screen = () => {
    const buffer = terminal.buffer.active
    const lines = Array.from({ length: buffer.length }, (_, row) => buffer.getLine(row)?.translateToString(true) ?? '')
    return lines.join('\n').trimEnd()
  }
  return {
    terminal,
    screen,
    waitForScreen: (predicate, timeoutMs = 10_000) => {
      const matching = () => {
        const text = screen()
        return predicate(text) ? text : undefined
      }
      return changes.until(
        matching,
        timeoutMs,
        () => `the screen did not match within ${timeoutMs} ms; last screen:\n${screen()}`,
      )
    },
    type: (keys) => pty.write(keys),
    exited,
    close: async () => {
      if (running) pty.kill()
      await exited
      terminal.dispose()
    },
  }
}
