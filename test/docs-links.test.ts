import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const REPOSITORY = 'https://github.com/eventwire/eventwire/blob/main/'
const documents = [
  'README.md',
  'CHANGELOG.md',
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
