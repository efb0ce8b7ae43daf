import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { LIBRARY } from '../src/core/version.js'

const root = fileURLToPath(new URL('..', import.meta.url))

function sourceFiles(dir: string, extensions = ['.ts']): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory()
      ? sourceFiles(path, extensions)
      : extensions.some((extension) => path.endsWith(extension))
        ? [path]
        : []
  })
}

/** Files only the Node builds load: the Node webhook build and the BullMQ adapter. */
const NODE_ONLY = new Set([
  ...[
    'src/webhook/node.ts',
    'src/webhook/node-only.ts',
    'src/webhook/node-destination.ts',
    'src/webhook/undici-transport.ts',
    'src/webhook/node-signer.ts',
  ].map((path) => join(root, path)),
  ...sourceFiles(join(root, 'src/webhook/bullmq')),
])
const isomorphicFiles = ['src/client', 'src/core', 'src/webhook']
  .flatMap((dir) => sourceFiles(join(root, dir)))
  .filter((file) => !NODE_ONLY.has(file))

/** The module specifiers a file imports or re-exports. */
function importsOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/g)].map(
    (match) => match[1] ?? '',
  )
}

describe('package', () => {
  it('sends the version package.json declares', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string }
    expect(LIBRARY).toEqual({ name: pkg.name, version: pkg.version })
  })

  it('keeps src/client, src/core and the isomorphic webhook files on Web APIs: no node:, Buffer or unguarded process', () => {
    const offenders: string[] = []
    for (const file of isomorphicFiles) {
      const text = readFileSync(file, 'utf8')
      if (/\bBuffer\b/.test(text)) offenders.push(`${file}: Buffer`)
      // process is only read through the guarded globalThis lookup in debug.ts.
      if (/(?<![.\w])process\./.test(text)) offenders.push(`${file}: process`)
      for (const specifier of importsOf(file)) {
        if (specifier.startsWith('node:') || ['undici', 'bullmq', 'ioredis'].includes(specifier))
          offenders.push(`${file}: imports ${specifier}`)
        if (specifier.startsWith('.') && NODE_ONLY.has(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')))) {
          offenders.push(`${file}: imports the Node-only ${specifier}`)
        }
      }
    }
    expect(isomorphicFiles.length).toBeGreaterThan(30)
    expect(offenders).toEqual([])
  })

  it('reads nothing outside the repository from tests, benches, scripts or examples (a fresh clone has only itself)', () => {
    const files = ['test', 'bench', 'scripts', 'examples'].flatMap((dir) =>
      sourceFiles(join(root, dir), ['.ts', '.mjs', '.js']),
    )
    const outside = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/new URL\(\s*['"](\.\.?\/[^'"]*)['"]\s*,\s*import\.meta\.url/g)]
        .map((match) => resolve(dirname(file), match[1] ?? ''))
        .filter((target) => !target.startsWith(root))
        .map((target) => `${file} -> ${target}`),
    )
    expect(files.length).toBeGreaterThan(50)
    expect(outside).toEqual([])
  })

  it("keeps the CLI on Node's own modules and the library: no package in dependencies only for the CLI", () => {
    const cliFiles = sourceFiles(join(root, 'src/cli'))
    const packages = cliFiles.flatMap((file) =>
      importsOf(file)
        .filter((specifier) => !specifier.startsWith('node:') && !specifier.startsWith('.'))
        .map((specifier) => `${file}: imports ${specifier}`),
    )
    expect(cliFiles.length).toBeGreaterThan(20)
    expect(packages).toEqual([])
  })
})
