import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { root, sourceOfTarget, targets } from './helpers/entry-points.js'
import { readTsConfig } from './helpers/tsconfig.js'
import vitestConfig from '../vitest.config.js'

/** Each platform import, and the folder of its modules. */
const PLATFORM_IMPORTS = {
  '#eventwire/client-transport': 'src/client/platform',
  '#eventwire/webhook-platform': 'src/webhook/platform',
}

/** Conditions of runtimes that also match "node", so must be listed before it to get the web module. */
const NOT_NODE = ['bun', 'deno', 'workerd', 'browser']

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  imports: Record<string, Record<string, { import: string; require: string }>>
}

describe('package.json "imports": one Client and one WebhookDestination, with each runtime its platform', () => {
  it('names the two platform imports and nothing else', () => {
    expect(Object.keys(pkg.imports).sort()).toEqual(Object.keys(PLATFORM_IMPORTS).sort())
  })

  /** Which module a condition gets: Node's under "node", the browsers' own for the client, web's for the rest. */
  const moduleFor = (specifier: string, condition: string) => {
    if (condition === 'node') return 'node'
    // Browsers send without ky (src/client/platform/browser.ts): every byte is every page's download.
    return condition === 'browser' && specifier === '#eventwire/client-transport' ? 'browser' : 'web'
  }

  it.each(Object.entries(PLATFORM_IMPORTS))(
    '%s: the Node module under "node" alone, the web module (the client: the browser one in browsers) elsewhere',
    (specifier, folder) => {
      const conditions = pkg.imports[specifier] ?? {}
      const keys = Object.keys(conditions)
      // Bun and Deno match "node" too: their conditions must come first, and "default" last.
      for (const condition of NOT_NODE) expect(keys.indexOf(condition)).toBeLessThan(keys.indexOf('node'))
      expect(keys.at(-1)).toBe('default')
      for (const [condition, target] of targets(conditions)) {
        expect(`${condition}: ${sourceOfTarget(target)}`).toBe(
          `${condition}: ${folder}/${moduleFor(specifier, condition)}.ts`,
        )
      }
      for (const { import: esm, require: cjs } of Object.values(conditions)) {
        expect(esm).toMatch(/\.js$/)
        expect(cjs).toBe(esm.replace(/\.js$/, '.cjs'))
      }
    },
  )

  it.each(Object.values(PLATFORM_IMPORTS))('%s: every platform module exports the same names', async (folder) => {
    const names = async (file: string) =>
      Object.keys((await import(pathToFileURL(join(root, folder, file)).href)) as object).sort()
    const modules = readdirSync(join(root, folder)).filter((file) => file.endsWith('.ts'))
    for (const file of modules) expect(`${file}: ${await names(file)}`).toBe(`${file}: ${await names('web.ts')}`)
  })

  it("resolves the same way in the repository's own tools: Node's module for the sources and tests, web's for the isomorphic check", () => {
    const paths = (config: string) => readTsConfig(join(root, config)).options.paths ?? {}
    const aliases = vitestConfig.resolve?.alias as Array<{ find: RegExp; replacement: string }>
    for (const [specifier, folder] of Object.entries(PLATFORM_IMPORTS)) {
      expect(paths('tsconfig.json')[specifier]).toEqual([`./${folder}/node.ts`])
      expect(paths('tsconfig.isomorphic.json')[specifier]).toEqual([`./${folder}/web.ts`])
      const alias = aliases.find((entry) => entry.find.test(specifier))
      expect(alias?.replacement).toBe(join(root, folder, 'node.ts'))
    }
  })
})
