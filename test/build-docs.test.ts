import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

// Each public class with a Node build is documented twice, once per build, because an editor
// shows the doc of the build its export condition picked. The two must say the same, apart from
// the paragraph that names the build; this test keeps them from drifting apart.
const src = fileURLToPath(new URL('../src/', import.meta.url))

/** The TSDoc right above `export class <name>` in `file`, without its build paragraph. */
function classDoc(file: string, name: string): string {
  const text = readFileSync(`${src}${file}`, 'utf8')
  const end = text.indexOf(`export class ${name} `)
  const start = text.lastIndexOf('/**', end)
  const paragraphs = text.slice(start, end).split(/\n \*\n/)
  const named = paragraphs.filter((paragraph) => /^ \* This (?:build|is the Node build)/.test(paragraph))
  expect(named, `${file}: one paragraph naming the build`).toHaveLength(1)
  return paragraphs.filter((paragraph) => !named.includes(paragraph)).join('\n *\n')
}

it.each([
  ['Client', 'client/client.ts', 'client/node-client.ts'],
  ['WebhookDestination', 'webhook/fetch-destination.ts', 'webhook/node-destination.ts'],
])('the two builds of %s carry the same class doc but for the paragraph naming the build', (name, web, node) => {
  expect(classDoc(node, name)).toBe(classDoc(web, name))
})
