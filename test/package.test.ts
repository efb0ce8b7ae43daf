import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { LIBRARY } from '../src/core/version.js'

const root = fileURLToPath(new URL('..', import.meta.url))

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : []
  })
}

describe('package', () => {
  it('sends the version package.json declares', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string }
    expect(LIBRARY).toEqual({ name: pkg.name, version: pkg.version })
  })

  /** The Node build's own files: the only ones that may reach undici. */
  const NODE_ONLY = ['src/webhook/node.ts', 'src/webhook/node-destination.ts', 'src/webhook/undici-transport.ts', 'src/webhook/node-signer.ts'].map((path) => join(root, path))
  const isomorphicFiles = () =>
    ['src/client', 'src/core', 'src/webhook'].flatMap((dir) => sourceFiles(join(root, dir))).filter((file) => !NODE_ONLY.includes(file))

  it('keeps src/client, src/core and src/webhook (the Node build aside) on Web APIs: no node:, Buffer or unguarded process', () => {
    const offenders: string[] = []
    for (const file of isomorphicFiles()) {
      const text = readFileSync(file, 'utf8')
      if (/from\s+['"]node:|require\(\s*['"]node:/.test(text)) offenders.push(`${file}: node: import`)
      if (/\bBuffer\b/.test(text)) offenders.push(`${file}: Buffer`)
      // process is only read through the guarded globalThis lookup in debug.ts.
      if (/(?<![.\w])process\./.test(text)) offenders.push(`${file}: process`)
    }
    expect(offenders).toEqual([])
  })

  it('lets only the Node build import undici, so receivers on edge runtimes never load it', () => {
    const importers = [...isomorphicFiles(), ...NODE_ONLY].filter((file) => /from\s+['"](undici|\.\/undici-transport\.js|\.\/node-destination\.js)['"]/.test(readFileSync(file, 'utf8')))
    expect(importers.map((file) => file.slice(root.length)).sort()).toEqual(['src/webhook/node-destination.ts', 'src/webhook/node.ts', 'src/webhook/undici-transport.ts'])
  })
})
