// Log lines that say the same thing again and again: while Redis is down, every connection of a
// process reports the same error each second it tries again. The first is written whole, the
// ones after it within the window are only counted, and the count is written once the window is
// over: a line per kind per window, however many arrive.

/** Kinds followed at most; a line of a kind past them is written whole, never dropped. */
const MAX_KINDS = 100

interface Kind {
  /** When the last line of this kind was written, on the clock's scale. */
  writtenAt: number
  /** Lines of this kind counted since then, not written. */
  held: number
}

/**
 * The lines of each kind (a key such as the level and the message) written and held back: one
 * written per kind per `everyMs`, the others counted for {@link Repeats.unreported}.
 *
 * @example
 * ```ts
 * const repeats = new Repeats(10_000)
 * if (repeats.take(`error ${message}`)) log({ level: 'error', message })
 * // and every 10 s:
 * for (const { kind, held } of repeats.unreported()) log({ message: kind, repeated: held })
 * ```
 */
export class Repeats {
  readonly #kinds = new Map<string, Kind>()

  constructor(
    readonly everyMs: number,
    readonly clock: () => number = () => performance.now(),
  ) {}

  /** Whether a line of this kind is written now: the first of its window. Counted otherwise. */
  take(kind: string): boolean {
    const now = this.clock()
    const known = this.#kinds.get(kind)
    if (known === undefined) {
      if (this.#kinds.size < MAX_KINDS) this.#kinds.set(kind, { writtenAt: now, held: 0 })
      return true
    }
    // Stryker disable next-line EqualityOperator: a line at exactly the window's end or just after is alike.
    if (now - known.writtenAt >= this.everyMs) {
      known.writtenAt = now
      return true
    }
    known.held++
    return false
  }

  /**
   * The lines held back of each kind since its last line, taken: what to write once a window, so
   * that the end of a flood is told too. A kind with none held and a window over is forgotten.
   */
  unreported(): Array<{ kind: string; held: number }> {
    const now = this.clock()
    const due: Array<{ kind: string; held: number }> = []
    for (const [kind, known] of this.#kinds) {
      if (known.held > 0) {
        due.push({ kind, held: known.held })
        known.held = 0
        known.writtenAt = now
      } else if (now - known.writtenAt >= this.everyMs) this.#kinds.delete(kind)
    }
    return due
  }
}
