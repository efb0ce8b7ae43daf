import { isObject } from '../../core/validate.js'

/** A record read from the registry: absent, unreadable (with why), or checked, with its version. */
export type ReadRecord<Checked> =
  | { readonly kind: 'absent' }
  | { readonly kind: 'unreadable'; readonly problem: string }
  | { readonly kind: 'found'; readonly checked: Checked; readonly version: number; readonly updatedAt: number }

/**
 * Parses and checks what the registry holds for `id`, a destination or a source. Anything with
 * Redis access can write it, so nothing is used that `check` (the rules `set()` applies) has not
 * passed, and a record must name the id it is stored under.
 *
 * A parse error is told without the piece of text that V8 quotes in its message: a record holds
 * secrets, and the problem is shown by the command line and written to logs.
 *
 * @param check - Checks the record's settings (all but `version` and `updatedAt`); throws why not.
 * @param idOf - The id the checked record names.
 */
export function readRecord<Checked>(
  id: string,
  json: string | null,
  check: (settings: Record<string, unknown>) => Checked,
  idOf: (checked: Checked) => string,
): ReadRecord<Checked> {
  if (json === null) return { kind: 'absent' }
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return { kind: 'unreadable', problem: 'its JSON does not parse' }
  }
  if (!isObject(parsed)) return { kind: 'unreadable', problem: 'it is not a JSON object' }
  const { version, updatedAt, ...settings } = parsed
  if (typeof version !== 'number' || typeof updatedAt !== 'number')
    return { kind: 'unreadable', problem: 'it has no version (it was not written by eventwire)' }
  let checked: Checked
  try {
    checked = check(settings)
  } catch (error) {
    return { kind: 'unreadable', problem: error instanceof Error ? error.message : String(error) }
  }
  const named = idOf(checked)
  if (named !== id) return { kind: 'unreadable', problem: `its id is ${JSON.stringify(named)}` }
  return { kind: 'found', checked, version, updatedAt }
}
