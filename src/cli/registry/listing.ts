import { escapeControl, writeJsonLine } from '../terminal.js'

// How the registry commands print what they read: a line per record (or a JSON line with
// --json), each unreadable record with why, and one record whole. What is printed may come from
// anyone with Redis access, so every line is escaped.

/** Each record as a line (`line`) or a JSON line, then each unreadable one with why. */
export function printListed<Record>(
  json: boolean | undefined,
  records: readonly Record[],
  unreadable: ReadonlyArray<{ id: string; problem: string }>,
  line: (record: Record) => string,
  asJson: (record: Record) => unknown = (record) => record,
): void {
  for (const record of records) {
    if (json) writeJsonLine(process.stdout, asJson(record))
    else process.stdout.write(`${line(record)}\n`)
  }
  for (const { id, problem } of unreadable) {
    if (json) writeJsonLine(process.stdout, { id, unreadable: problem })
    else process.stdout.write(`${escapeControl(`${id}  unreadable: ${problem}`)}\n`)
  }
}

/** One record whole: a JSON line, or indented JSON. */
export function printRecord(json: boolean | undefined, record: unknown): void {
  if (json) writeJsonLine(process.stdout, record)
  // Line by line: the lines' own breaks are the layout, what is in them may come from anyone with Redis access.
  else process.stdout.write(`${JSON.stringify(record, null, 2).split('\n').map(escapeControl).join('\n')}\n`)
}

/** Says that `id` was deleted. */
export function printDeleted(json: boolean | undefined, id: string): void {
  if (json) writeJsonLine(process.stdout, { id, deleted: true })
  else process.stdout.write(`deleted ${escapeControl(id)}\n`)
}
