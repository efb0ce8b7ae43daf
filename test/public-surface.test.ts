import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  compiledExports,
  entryFiles,
  entryPoints,
  entrySyntax,
  root,
  runtimeExports,
  type ExportKind,
} from './helpers/entry-points.js'

const sorted = (names: Iterable<string>) => [...names].sort()

const EXPORTS_PAGE = join(root, 'docs/exports.md')

/** One row of docs/exports.md. */
interface DocumentedExport {
  readonly entry: string
  readonly name: string
  readonly kind: string
  readonly purpose: string
  readonly link: string
  readonly line: number
}

/**
 * The rows of docs/exports.md, each under the entry point its `## \`specifier\`` heading names.
 * A row that does not parse is an error, so that a typo cannot hide an export from the check.
 */
function documentedExports(): DocumentedExport[] {
  const rows: DocumentedExport[] = []
  let entry: string | undefined
  readFileSync(EXPORTS_PAGE, 'utf8')
    .split('\n')
    .forEach((text, index) => {
      const heading = /^(#+)\s+(.*)$/.exec(text)
      if (heading) {
        entry = heading[1] === '##' ? /^`([^`]+)`$/.exec(heading[2] ?? '')?.[1] : undefined
        return
      }
      if (!text.startsWith('| `')) return
      const row = /^\| `([^`]+)` \| ([a-z]+) \| (.+?) \| \[[^\]]+\]\(([^)\s]+)\) \|$/.exec(text)
      if (!row || entry === undefined)
        throw new Error(`docs/exports.md:${index + 1}: not a row of an entry point's table: ${text}`)
      const [, name = '', kind = '', purpose = '', link = ''] = row
      rows.push({ entry, name, kind, purpose, link, line: index + 1 })
    })
  return rows
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** The anchors of a Markdown file's headings (outside code blocks), as GitHub numbers repeats. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>()
  let fenced = false
  for (const text of readFileSync(file, 'utf8').split('\n')) {
    if (text.startsWith('```')) fenced = !fenced
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(text)
    if (!heading) continue
    const base = slug(heading[1] ?? '')
    let anchor = base
    for (let repeat = 1; anchors.has(anchor); repeat++) anchor = `${base}-${repeat}`
    anchors.add(anchor)
  }
  return anchors
}

/** What a value exported at run time is, in the page's words. */
function runtimeKind(value: unknown): ExportKind {
  if (typeof value !== 'function') return 'constant'
  return /^class\b/.test(Function.prototype.toString.call(value)) ? 'class' : 'function'
}

describe('public surface', () => {
  it('reads the entry points from package.json and tsup.config.ts', () => {
    expect(entryPoints()).toEqual([
      { specifier: 'eventwire', file: 'src/index.ts' },
      { specifier: 'eventwire/webhook', file: 'src/webhook/index.ts' },
      { specifier: 'eventwire/webhook/node', file: 'src/webhook/node-only.ts' },
      { specifier: 'eventwire/webhook/bullmq', file: 'src/webhook/bullmq/index.ts' },
      { specifier: 'eventwire/webhook/otel', file: 'src/webhook/otel/index.ts' },
      { specifier: 'eventwire/disk-queue', file: 'src/client/disk-queue/index.ts' },
    ])
  })

  it.each(entryFiles())('%s is nothing but named export lists (no export *, no declarations)', (file) => {
    const syntax = entrySyntax(file)
    expect(syntax.other).toEqual([])
    expect(syntax.values.length + syntax.typeOnly.length).toBeGreaterThan(0)
  })

  it.each(entryFiles())('%s exports at run time exactly the values its lists name', async (file) => {
    const { values, typeOnly } = entrySyntax(file)
    expect(await runtimeExports(file)).toEqual(sorted(values))
    // What the compiler resolves is what the lists say, types included.
    expect(sorted(compiledExports(file).map((entry) => entry.name))).toEqual(sorted([...values, ...typeOnly]))
  })

  it.each(entryFiles())('%s documents every export with TSDoc', (file) => {
    const undocumented = compiledExports(file)
      .filter((entry) => entry.doc === '')
      .map((entry) => entry.name)
    expect(undocumented).toEqual([])
  })

  describe('docs/exports.md', () => {
    // Read in each test, so that a row that does not parse fails a test rather than the file.
    let read: DocumentedExport[] | undefined
    const documented = () => (read ??= documentedExports())

    it('has a table for every entry point, and none for anything else', () => {
      expect(sorted(new Set(documented().map((row) => row.entry)))).toEqual(
        sorted(entryPoints().map((entry) => entry.specifier)),
      )
    })

    it.each(entryPoints())('lists exactly what $specifier exports, each once, with its kind', async (entry) => {
      const rows = documented().filter((row) => row.entry === entry.specifier)
      const listed = rows.map((row) => `${row.name}: ${row.kind}`)
      expect(listed.length).toBe(new Set(rows.map((row) => row.name)).size)
      expect(sorted(listed)).toEqual(sorted(compiledExports(entry.file).map(({ name, kind }) => `${name}: ${kind}`)))
      // The kinds of values, checked against the values themselves, imported from the sources.
      const module = (await import(pathToFileURL(join(root, entry.file)).href)) as Record<string, unknown>
      const values = rows.filter((row) => row.kind !== 'type')
      expect(sorted(values.map((row) => row.name))).toEqual(await runtimeExports(entry.file))
      for (const row of values) expect(`${row.name}: ${runtimeKind(module[row.name])}`).toBe(`${row.name}: ${row.kind}`)
    })

    it('gives every export a purpose and a link to a section that exists', () => {
      const broken = documented().flatMap((row) => {
        const [path = '', anchor] = row.link.split('#')
        const file = join(dirname(EXPORTS_PAGE), path)
        const where = `docs/exports.md:${row.line} (${row.name}) -> ${row.link}`
        if (row.purpose.trim().length < 10) return [`${where}: no purpose`]
        if (path === '' || !existsSync(file)) return [`${where}: no file ${relative(root, file)}`]
        if (anchor === undefined || !anchorsOf(file).has(anchor)) return [`${where}: no such section`]
        return []
      })
      expect(documented().length).toBeGreaterThan(50)
      expect(broken).toEqual([])
    })

    it('reads links as GitHub does', () => {
      expect(slug('Webhooks: durable delivery on BullMQ and Redis')).toBe(
        'webhooks-durable-delivery-on-bullmq-and-redis',
      )
      expect(slug('What survives what (`durability`)')).toBe('what-survives-what-durability')
      expect(slug('close()')).toBe('close')
      expect(slug('Set up (on a fresh clone)')).toBe('set-up-on-a-fresh-clone')
    })
  })
})
