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

/** One JSON object per line (NDJSON), the `--json` output of every command. */
export function writeJsonLine(stream: Writable, value: unknown): void {
  stream.write(`${JSON.stringify(value)}\n`)
}
