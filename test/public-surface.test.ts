import { describe, expect, it } from 'vitest'
import { compiledExports, entryFiles, entryPoints, entrySyntax, runtimeExports } from './helpers/entry-points.js'

const sorted = (names: Iterable<string>) => [...names].sort()

describe('public surface', () => {
  it('reads the entry points from package.json and tsup.config.ts', () => {
    expect(entryPoints()).toEqual([
      { specifier: 'eventwire', file: 'src/index.ts', variants: {} },
      { specifier: 'eventwire/webhook', file: 'src/webhook/index.ts', variants: { node: 'src/webhook/node.ts' } },
      { specifier: 'eventwire/webhook/node', file: 'src/webhook/node-only.ts', variants: {} },
      { specifier: 'eventwire/webhook/bullmq', file: 'src/webhook/bullmq/index.ts', variants: {} },
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

  it("gives the Node build of eventwire/webhook the other builds' exports, name for name and kind for kind", async () => {
    for (const entry of entryPoints()) {
      for (const variant of Object.values(entry.variants)) {
        expect(entrySyntax(variant).values.sort()).toEqual(entrySyntax(entry.file).values.sort())
        expect(entrySyntax(variant).typeOnly.sort()).toEqual(entrySyntax(entry.file).typeOnly.sort())
        expect(await runtimeExports(variant)).toEqual(await runtimeExports(entry.file))
        const kinds = (file: string) =>
          compiledExports(file)
            .map(({ name, kind }) => `${name}: ${kind}`)
            .sort()
        expect(kinds(variant)).toEqual(kinds(entry.file))
      }
    }
  })
})
