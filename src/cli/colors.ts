import { styleText } from 'node:util'

/** The styles the CLI uses: a few, so that every line reads the same on any terminal theme. */
export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'blue' | 'cyan'

/**
 * Whether output to `stream` should be coloured: never with `NO_COLOR`, always with `FORCE_COLOR`
 * (but `FORCE_COLOR=0`), otherwise only on a terminal that has colours. Node 20's `styleText`
 * colours unconditionally, so the CLI asks this once and styles nothing when it says no.
 */
export function colorsEnabled(
  stream: Pick<NodeJS.WriteStream, 'isTTY' | 'hasColors'>,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (env['NO_COLOR'] !== undefined) return false
  if (env['FORCE_COLOR'] !== undefined) return env['FORCE_COLOR'] !== '0' && env['FORCE_COLOR'] !== 'false'
  // hasColors() says no for TERM=dumb and the like.
  return stream.isTTY === true && stream.hasColors()
}

// Decided for standard output, as for every line the CLI writes: error lines beside pretty output
// look the same, and a script that pipes stdout gets plain text on both.
const enabled = colorsEnabled(process.stdout)

/** `text` in `style`, or as it is when colours are off (see {@link colorsEnabled}). */
export function paint(style: Style, text: string): string {
  return enabled ? styleText(style, text) : text
}
