// A user's TypeScript against the installed tarball: strict with exactOptionalPropertyTypes and
// noUncheckedIndexedAccess, under node16 resolution (ESM .mts and CommonJS .cts files) and
// bundler resolution. It compiles every ```ts snippet of README.md, docs/*.md and the TSDoc
// examples in the package's declaration files as it is written there (nothing is copied by
// hand), the consumer files in ./consumers, and checks that the mistakes in
// consumers/mistakes.mts fail with an error naming the field.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..')

const STRICT = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noEmit: true,
  skipLibCheck: false,
  target: 'es2022',
  lib: ['es2022', 'dom'],
  types: ['node'],
}
const SETUPS = [
  { name: 'node16', options: { module: 'node16', moduleResolution: 'node16' }, extensions: ['.mts', '.cts'] },
  { name: 'bundler', options: { module: 'preserve', moduleResolution: 'bundler' }, extensions: ['.ts'] },
]

/** The ```ts blocks of `lines`, each with the line it starts on. */
function fencedBlocks(file, lines) {
  const found = []
  for (let index = 0; index < lines.length; index++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[index])) continue
    const start = index + 1
    while (index + 1 < lines.length && !lines[++index].startsWith('```'));
    found.push({ file, line: start, code: lines.slice(start, index).join('\n') })
  }
  return found
}

/**
 * Every ```ts block of the README and docs/*.md, and of the TSDoc `@example`s in the installed
 * package's declaration files (what editors and the API docs show), each with where it starts.
 */
export function snippets(app) {
  const docs = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ]
  const fromDocs = docs.flatMap((file) => fencedBlocks(file, readFileSync(join(root, file), 'utf8').split('\n')))
  const dist = join(app, 'node_modules', 'eventwire', 'dist')
  const declarations = readdirSync(dist).filter((name) => name.endsWith('.d.ts'))
  const seen = new Set()
  const fromTsdoc = declarations
    .flatMap((name) =>
      fencedBlocks(
        name,
        readFileSync(join(dist, name), 'utf8')
          .split('\n')
          .map((line) => line.replace(/^\s*\* ?/, '')),
      ),
    )
    // Chunks of the build may carry the same declaration twice.
    .filter((block) => !seen.has(block.code) && seen.add(block.code))
  return [...fromDocs, ...fromTsdoc]
}

/**
 * The CommonJS form of a snippet: imports stay at the top (TypeScript turns them into require
 * calls) and the rest runs in an async function, since CommonJS has no top-level await.
 */
function asCommonJs(code) {
  const lines = code.split('\n')
  const isImport = (line) => /^import\s/.test(line)
  // A declaration the snippet exports becomes local to the function: only its types matter here.
  const body = lines
    .filter((line) => !isImport(line))
    .map((line) => line.replace(/^export (?=async |function |const |class |interface |type )/, ''))
  return [...lines.filter(isImport), 'void (async () => {', ...body, '})()', 'export {}'].join('\n')
}

const tsc = (project) =>
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })

/** Compiles `files` (name -> source) in a folder of `app` under one setup; returns tsc's output, '' when clean. */
function compile(app, folder, setup, files) {
  const dir = join(app, 'ts', folder)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source)
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { ...STRICT, ...setup.options }, files: Object.keys(files) }, null, 2),
  )
  try {
    tsc(dir)
    return ''
  } catch (error) {
    return `${error.stdout ?? ''}${error.stderr ?? ''}` || error.message
  }
}

/** Each file of ./consumers in the form each setup compiles (a .mts also as .ts for bundler). */
function consumerFiles(setup) {
  const sources = readdirSync(join(here, 'consumers')).filter((name) => name !== 'mistakes.mts')
  const files = {}
  for (const name of sources) {
    const source = readFileSync(join(here, 'consumers', name), 'utf8')
    if (setup.name === 'bundler') files[name.replace(/\.[mc]ts$/, '.ts')] = source
    else files[name] = source
  }
  return files
}

/**
 * `consumers/mistakes.mts`: each line marked `// names: WORD` must fail to compile with an error
 * that names WORD, in its text or by where it points (the editor underlines WORD), and no other
 * line may fail.
 */
function mistakesCheck(app, setup) {
  const source = readFileSync(join(here, 'consumers', 'mistakes.mts'), 'utf8')
  const output = compile(app, `${setup.name}-mistakes`, setup, {
    [setup.name === 'bundler' ? 'mistakes.ts' : 'mistakes.mts']: source,
  })
  const byLine = new Map()
  let current
  for (const text of output.split('\n')) {
    const match = /(?:^|\/)mistakes\.m?ts\((\d+),(\d+)\): error (.*)$/.exec(text)
    if (match) {
      current = byLine.get(Number(match[1])) ?? byLine.set(Number(match[1]), []).get(Number(match[1]))
      current.push({ column: Number(match[2]), text: match[3] })
    } else if (current) current.at(-1).text += ` ${text.trim()}`
  }
  const problems = []
  source.split('\n').forEach((line, index) => {
    const expected = /\/\/ names: (.+)$/.exec(line)?.[1].trim()
    const errors = byLine.get(index + 1) ?? []
    const names = (error) => error.text.includes(expected) || line.startsWith(expected, error.column - 1)
    const shown = errors.map((error) => `(col ${error.column}) ${error.text}`).join(' | ') || 'none'
    if (expected && !errors.some(names))
      problems.push(`line ${index + 1} (${line.trim()}): wanted an error naming ${expected}, got: ${shown}`)
    if (!expected && errors.length > 0) problems.push(`line ${index + 1} (${line.trim()}): unexpected error: ${shown}`)
  })
  return problems.join('\n')
}

/** Packages the README's snippets import that ship as ES modules only (ArkType 2). */
const ESM_ONLY = ['arktype']

/** All the TypeScript checks, as matrix results. `app` has the tarball and @types/node installed. */
export function typescriptChecks(app) {
  const results = []
  const found = snippets(app)
  for (const setup of SETUPS) {
    const files = consumerFiles(setup)
    for (const snippet of found) {
      const base = `snippet-${basename(snippet.file).replace(/\W+/g, '-').toLowerCase()}-${snippet.line}`
      for (const extension of setup.extensions) {
        // A package that ships ESM only cannot be required: such a snippet is ESM (as its README says).
        if (extension === '.cts' && ESM_ONLY.some((name) => snippet.code.includes(`from '${name}'`))) continue
        files[`${base}${extension}`] = extension === '.cts' ? asCommonJs(snippet.code) : snippet.code
      }
    }
    const output = compile(app, setup.name, setup, files)
    results.push({
      name: `TypeScript ${setup.name} (${setup.extensions.join(', ')}), strict + exactOptionalPropertyTypes: ${found.length} doc and TSDoc snippets and ${Object.keys(consumerFiles(setup)).length} consumer files compile`,
      ok: output === '',
      error: output,
    })
    const mistakes = mistakesCheck(app, setup)
    results.push({
      name: `TypeScript ${setup.name}: each mistake fails with an error naming the field`,
      ok: mistakes === '',
      error: mistakes,
    })
  }
  return results
}
