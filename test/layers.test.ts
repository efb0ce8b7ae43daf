import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

// The layers of docs/architecture.md: core at the bottom, client and webhook on it and never on
// each other, the CLI on top (its own test keeps it on the public entries: test/package.test.ts).
const src = fileURLToPath(new URL('../src', import.meta.url))
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  core: ['core'],
  client: ['core', 'client'],
  webhook: ['core', 'webhook'],
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
}

/** The layer (first folder under src) of each relative import of `file`. */
function importedLayers(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((match) => match[1] as string)
  return specifiers.map((specifier) => relative(src, resolve(dirname(file), specifier)).split('/')[0] as string)
}

it.each(Object.entries(MAY_IMPORT))('src/%s imports only from %j', (layer, allowed) => {
  const breaches = filesUnder(join(src, layer)).flatMap((file) =>
    importedLayers(file)
      .filter((imported) => !allowed.includes(imported))
      .map((imported) => `${relative(src, file)} -> ${imported}`),
  )
  expect(breaches).toEqual([])
})

it('sees the imports it checks (a file of each layer imports core)', () => {
  for (const layer of Object.keys(MAY_IMPORT)) {
    expect(filesUnder(join(src, layer)).some((file) => importedLayers(file).includes('core'))).toBe(true)
  }
})
