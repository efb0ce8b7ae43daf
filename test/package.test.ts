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

  it('keeps src/client and src/core on Web APIs: no node: imports, no Buffer, no unguarded process', () => {
    const offenders: string[] = []
    for (const file of [...sourceFiles(join(root, 'src/client')), ...sourceFiles(join(root, 'src/core'))]) {
      const text = readFileSync(file, 'utf8')
      if (/from\s+['"]node:|require\(\s*['"]node:/.test(text)) offenders.push(`${file}: node: import`)
      if (/\bBuffer\b/.test(text)) offenders.push(`${file}: Buffer`)
      // process is only read through the guarded globalThis lookup in debug.ts.
      if (/(?<![.\w])process\./.test(text)) offenders.push(`${file}: process`)
    }
    expect(offenders).toEqual([])
  })
})
