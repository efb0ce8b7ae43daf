import { clearScreenDown, cursorTo, moveCursor } from 'node:readline'
import { stripVTControlCharacters } from 'node:util'

/** The terminal rows `text` takes `columns` wide: a line longer than that wraps onto more. */
function rowsOf(text: string, columns: number): number {
  // Code points, not UTF-16 units: `…` and `→` are one column each (wide CJK would count short).
  return text
    .split('\n')
    .reduce((rows, line) => rows + Math.max(1, Math.ceil([...stripVTControlCharacters(line)].length / columns)), 0)
}

/**
 * Text redrawn in place on a terminal: each frame replaces the one before it, and whatever is
 * written to the stream after the last frame stays under it.
 */
export class InPlaceOutput {
  readonly #stream: NodeJS.WriteStream
  /** Rows the last frame took, to go back up over them. */
  #rows = 0

  constructor(stream: NodeJS.WriteStream) {
    this.#stream = stream
  }

  draw(frame: string): void {
    // Corked, the cursor moves and the frame reach the terminal in one write: no half-drawn frame flickers.
    this.#stream.cork()
    moveCursor(this.#stream, 0, -this.#rows)
    cursorTo(this.#stream, 0)
    clearScreenDown(this.#stream)
    this.#stream.write(`${frame}\n`)
    this.#stream.uncork()
    this.#rows = rowsOf(frame, this.#stream.columns ?? 80)
  }
}
