import type { Writable } from 'node:stream'

/** Local wall-clock time with milliseconds, `14:02:11.532`: the first column of every log line. */
export function clock(date: Date = new Date()): string {
  const pad = (value: number, width = 2) => String(value).padStart(width, '0')
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
}

/** Cuts text to `width` characters, marking the cut with an ellipsis. */
export function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`
}

// What JSON.stringify leaves raw inside strings but a terminal may act on: DEL, C1, bidi controls.
const RAW_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/**
 * One JSON object per line (NDJSON), the `--json` output of every command. JSON.stringify escapes
 * C0 controls; DEL, C1 and bidi controls are escaped too (`\u009b`), which is the same JSON value,
 * so a terminal showing the lines has nothing to act on either.
 */
export function writeJsonLine(stream: Writable, value: unknown): void {
  const json = JSON.stringify(value).replace(
    RAW_IN_JSON,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
  stream.write(`${json}\n`)
}

// C0 controls, DEL, C1 controls, and the bidi embeddings, overrides and isolates that reorder
// what follows them on screen.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/**
 * Text from the network made safe to print on a terminal: every control character is shown as
 * its escape (`\x1b`, `\u202e`) instead of acting, so that no request can retitle, clear or hide
 * the operator's terminal or make one thing look like another. Every pretty output path of the
 * CLI passes what it did not write itself through here; `--json` lines are JSON-escaped instead.
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (character) => {
    const code = character.charCodeAt(0)
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`
  })
}
