import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const REPOSITORY = 'https://github.com/eventwire/eventwire/blob/main/'
const documents = [
  'README.md',
  'CHANGELOG.md',
  'CONTRIBUTING.md',
  'SECURITY.md',
  'bench/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]

/** Where each Markdown link of `document` points inside the repository: the README's absolute links and relative ones. */
function repositoryTargets(document: string): string[] {
  const text = readFileSync(join(root, document), 'utf8')
  const targets: string[] = []
  for (const [, href] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const path = (href as string).split('#')[0] as string
    if (path.startsWith(REPOSITORY)) targets.push(path.slice(REPOSITORY.length))
    else if (path !== '' && !/^[a-z]+:/i.test(path))
      targets.push(relative(root, join(root, dirname(document), decodeURIComponent(path))))
  }
  return targets
}

it.each(documents)('every link of %s to a file of the repository points at one that exists', (document) => {
  const missing = repositoryTargets(document).filter((target) => !existsSync(join(root, target)))
  expect(missing).toEqual([])
})

/** The files `npm pack` puts in the package, relative to its root (the build aside: links never point into dist/). */
function packedFiles(): Set<string> {
  const [pack] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' }),
  ) as [{ files: { path: string }[] }]
  return new Set(pack.files.map((file) => file.path))
}

describe('in the installed package (node_modules/eventwire)', () => {
  const packed = packedFiles()
  const shipped = [...packed].filter((path) => path.endsWith('.md'))

  it('ships every guide, the examples and what they link to', () => {
    for (const document of documents) expect(packed, document).toContain(document)
    expect(shipped.length).toBeGreaterThan(15)
    expect([...packed].filter((path) => path.startsWith('examples/')).length).toBeGreaterThan(5)
  })

  it.each(shipped)('every relative link of %s points at a file the package ships', (document) => {
    const missing = repositoryTargets(document).filter(
      (target) => !packed.has(target) && ![...packed].some((path) => path.startsWith(`${target}/`)),
    )
    expect(missing).toEqual([])
  })

  it.each(shipped)('%s links to files the package ships by relative links, not to GitHub', (document) => {
    const text = readFileSync(join(root, document), 'utf8')
    const absolute = [...text.matchAll(new RegExp(`\\]\\((${REPOSITORY}[^)#\\s]+)`, 'g'))]
      .map((match) => (match[1] as string).slice(REPOSITORY.length))
      .filter((target) => packed.has(target))
    expect(absolute).toEqual([])
  })
})
