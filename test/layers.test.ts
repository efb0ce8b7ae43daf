import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

// The layers of docs/architecture.md: core at the bottom, client and webhook on it and never on
// each other, the CLI on top (its own test keeps it on the public entries: test/package.test.ts).
const src = fileURLToPath(new URL('../src', import.meta.url))
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  core: ['core'],
  // Node's HTTP/1.1 stack: both halves send through it from their Node-only files (the isomorphic
  // build, tsconfig.isomorphic.json, fails on a node: import reached from the other entries).
  http1: ['core', 'http1'],
  client: ['core', 'client', 'http1'],
  webhook: ['core', 'webhook', 'http1'],
}

/**
 * Within a layer, folders that stand below others: the network (requests, transports, where they
 * may go) knows nothing of the delivery engine that sends through it.
 */
const MAY_NOT_IMPORT: Readonly<Record<string, readonly string[]>> = {
  'webhook/network': ['webhook/delivery'],
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
}

/** Each relative import of `file`, as a path under src. */
function importedPaths(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((match) => match[1] as string)
  return specifiers.map((specifier) => relative(src, resolve(dirname(file), specifier)))
}

/** The layer (first folder under src) of each relative import of `file`. */
function importedLayers(file: string): string[] {
  return importedPaths(file).map((path) => path.split('/')[0] as string)
}

it.each(Object.entries(MAY_IMPORT))('src/%s imports only from %j', (layer, allowed) => {
  const breaches = filesUnder(join(src, layer)).flatMap((file) =>
    importedLayers(file)
      .filter((imported) => !allowed.includes(imported))
      .map((imported) => `${relative(src, file)} -> ${imported}`),
  )
  expect(breaches).toEqual([])
})

it.each(Object.entries(MAY_NOT_IMPORT))('src/%s imports nothing from %j', (folder, refused) => {
  const breaches = filesUnder(join(src, folder)).flatMap((file) =>
    importedPaths(file)
      .filter((imported) => refused.some((below) => imported.startsWith(`${below}/`)))
      .map((imported) => `${relative(src, file)} -> ${imported}`),
  )
  expect(breaches).toEqual([])
})

it('sees the imports it checks (a file of each layer imports core; the engine imports the network)', () => {
  for (const layer of Object.keys(MAY_IMPORT)) {
    expect(filesUnder(join(src, layer)).some((file) => importedLayers(file).includes('core'))).toBe(true)
  }
  for (const [folder, refused] of Object.entries(MAY_NOT_IMPORT)) {
    for (const above of refused) {
      const imports = filesUnder(join(src, above)).flatMap(importedPaths)
      expect(imports.some((imported) => imported.startsWith(`${folder}/`))).toBe(true)
    }
  }
})
