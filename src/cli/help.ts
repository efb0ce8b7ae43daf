/** A part of a help page: a title and its two-column rows (`-p, --port <port>`, what it does). */
export interface HelpSection {
  readonly title: string
  readonly rows: ReadonlyArray<readonly [term: string, description: string]>
}

/** What a help page says, top to bottom. */
export interface HelpPage {
  /** What follows `Usage: `, e.g. `eventwire dev [options]`. */
  readonly usage: string
  readonly description: string
  readonly sections: readonly HelpSection[]
  /** Text at the end, as it is: exit codes, an example. */
  readonly epilog?: string
}

/** The narrowest description column worth wrapping into; below it, descriptions run on. */
const MIN_DESCRIPTION_WIDTH = 30

/** The words of `text` in lines of at most `width` characters (a longer word keeps its own line). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter((part) => part !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line === '' ? word : `${line} ${word}`
    }
  }
  return [...lines, line]
}

/**
 * A help page laid out for a terminal `width` columns wide: every section's terms in one column,
 * so that options and arguments line up, and descriptions wrapped beside them.
 */
export function formatHelp(page: HelpPage, width: number): string {
  const termWidth = Math.max(...page.sections.flatMap((section) => section.rows.map(([term]) => term.length)))
  const descriptionWidth = Math.max(MIN_DESCRIPTION_WIDTH, width - termWidth - 4)
  const indent = ' '.repeat(termWidth + 4)
  const section = ({ title, rows }: HelpSection) =>
    [
      `${title}:`,
      ...rows.map(
        ([term, description]) =>
          `  ${term.padEnd(termWidth)}  ${wrap(description, descriptionWidth).join(`\n${indent}`)}`,
      ),
    ].join('\n')
  const parts = [`Usage: ${page.usage}`, wrap(page.description, width).join('\n'), ...page.sections.map(section)]
  if (page.epilog !== undefined) parts.push(page.epilog)
  return `${parts.join('\n\n')}\n`
}
