// The API reference is a site a user would open: after `npm run docs`, checks that it names the
// modules by their import paths, shows the title once, and carries every guide of docs/ as a page.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const site = `${root}docs/api/`
const problems = []

const specifiers = [
  'eventwire',
  'eventwire/webhook',
  'eventwire/webhook/node',
  'eventwire/webhook/bullmq',
  'eventwire/webhook/otel',
]
for (const specifier of specifiers) {
  const page = `${site}modules/${specifier.replaceAll('/', '_')}.html`
  if (!existsSync(page)) problems.push(`no module page named ${specifier} (${page})`)
}
const index = readFileSync(`${site}index.html`, 'utf8')
const titles = index.match(/<h1[\s>]/g)?.length ?? 0
if (titles !== 1) problems.push(`index.html has ${titles} <h1> headings, expected 1`)
const typedoc = JSON.parse(readFileSync(`${root}typedoc.json`, 'utf8'))
for (const guide of readdirSync(`${root}docs`).filter((name) => name.endsWith('.md'))) {
  if (!typedoc.projectDocuments.includes(`docs/${guide}`))
    problems.push(`docs/${guide} is not in typedoc.json's projectDocuments`)
  else if (!existsSync(`${site}documents/${guide.replace(/\.md$/, '.html')}`))
    problems.push(`no page for docs/${guide}`)
}
if (problems.length > 0) {
  console.error(`the API reference site:\n- ${problems.join('\n- ')}`)
  process.exit(1)
}
console.log(`API reference: ${specifiers.length} modules named by import path, one title, every guide a page`)
