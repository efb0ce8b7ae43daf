import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// No import cycles in src, type-only ones included: a cycle makes two files one concern that
// neither can be read, moved or tested without the other (and a value cycle makes the order
// in which modules load matter). Beside test/layers.test.ts, which says which way imports go.
const src = fileURLToPath(new URL('../src', import.meta.url))

/**
 * The static imports of a module's text: `import … from`, `import type … from`, a bare
 * `import '…'`, and `export {…} from` or `export * from` (`type` or not), over as many lines as
 * they take. An import clause holds no quote, parenthesis, `=`, `:` or `;`, so a declaration or a
 * dynamic `import()` is never read as one.
 */
const STATIC_IMPORT =
  /^\s*(?:import\s(?:[^'"();=:]*?\sfrom\s*)?|export\s+(?:type\s+)?[{*][^'"();=:]*?\sfrom\s*)'([^']+)'/gm

/** The relative specifiers `text` imports statically. */
function relativeImports(text: string): string[] {
  return [...text.matchAll(STATIC_IMPORT)].map((match) => match[1] as string).filter((path) => path.startsWith('.'))
}

/** Every .ts file under src, by its path under src, with the files under src it imports (`.js` is the `.ts` beside it). */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(src, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const imported = relativeImports(readFileSync(file, 'utf8'))
      .map((specifier) => resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))
      // Not a module of src (package.json, for the version): no cycle can pass through it.
      .filter((path) => path.endsWith('.ts') && existsSync(path))
    graph.set(
      relative(src, file),
      imported.map((path) => relative(src, path)),
    )
  }
  return graph
}

/**
 * The cycles a depth-first walk of `graph` closes, each as the files on it, the first again at
 * the end. Every set of files that import each other round shows at least one.
 */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const done = new Set<string>()
  const path: string[] = []
  const onPath = new Set<string>()
  const cycles: string[][] = []
  const visit = (file: string): void => {
    path.push(file)
    onPath.add(file)
    for (const next of graph.get(file) ?? []) {
      if (onPath.has(next)) cycles.push([...path.slice(path.indexOf(next)), next])
      else if (!done.has(next)) visit(next)
    }
    path.pop()
    onPath.delete(file)
    done.add(file)
  }
  for (const file of [...graph.keys()].sort()) if (!done.has(file)) visit(file)
  return cycles
}

describe('import cycles', () => {
  it('src has none, type-only imports and re-exports included', () => {
    expect(cyclesOf(importGraph()).map((cycle) => cycle.join(' -> '))).toEqual([])
  })

  it('reads every static form, over several lines, and no dynamic import', () => {
    const text = [
      "import { a } from './a.js'",
      'import {',
      '  b,',
      '  type B,',
      "} from '../b.js'",
      "import type { C } from './c.js'",
      "import * as d from './d.js'",
      "import './e.js'",
      "export { f } from './f.js'",
      "export type { G } from './g.js'",
      "export * from './h.js'",
      "import { undici } from 'undici'",
      "const lazy = await import('./not-static.js')",
      " * import { Client } from './in-a-comment.js'",
      "export const i = './not-an-import.js'",
      'export interface J {',
      "  /** where it came from './not-an-import-either.js' */",
      '  readonly j: string',
      '}',
    ].join('\n')
    expect(relativeImports(text)).toEqual([
      './a.js',
      '../b.js',
      './c.js',
      './d.js',
      './e.js',
      './f.js',
      './g.js',
      './h.js',
    ])
  })

  it('names each cycle, a file importing itself too', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ])
    expect(cyclesOf(graph)).toEqual([
      ['a.ts', 'b.ts', 'c.ts', 'a.ts'],
      ['e.ts', 'e.ts'],
    ])
  })

  it('sees the imports of src (the entries import the client, the webhook engine and core)', () => {
    const graph = importGraph()
    expect(graph.get('index.ts')).toContain('client/client.ts')
    expect(graph.get('webhook/index.ts')?.some((file) => file.startsWith('webhook/delivery/'))).toBe(true)
    expect([...graph.values()].flat()).toContain('core/queue.ts')
  })
})
