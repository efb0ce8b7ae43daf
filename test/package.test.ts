import { execFile, execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import ts from 'typescript'
import { readTsConfig } from './helpers/tsconfig.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LIBRARY } from '../src/core/version.js'
import { entryFiles } from './helpers/entry-points.js'
import { startSink } from './helpers/sink.js'

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

/** The module specifiers a file imports or re-exports. */
function importsOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/g)].map(
    (match) => match[1] ?? '',
  )
}

/**
 * The files a CLI source file imports (statically, dynamically or for side effects) that are
 * neither in src/cli, nor a public entry point, nor package.json: library internals, which a user
 * of the package could not import either.
 */
function internalImports(file: string, text: string): string[] {
  const cli = join(root, 'src/cli') + sep
  const allowed = new Set([...entryFiles().map((entry) => join(root, entry)), join(root, 'package.json')])
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((imported) => imported.fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolve(dirname(file), specifier).replace(/\.js$/, '.ts'))
    .filter((target) => !target.startsWith(cli) && !allowed.has(target))
    .map((target) => `${relative(root, file)} imports ${relative(root, target)}`)
}

/**
 * The program `tsconfig.isomorphic.json` describes, with one more root file in src/core that uses
 * Node: what the compiler says about it shows that the configuration refuses Node there.
 */
function isomorphicDiagnostics(probe: string): { file: string; message: string }[] {
  const probePath = join(root, 'src/core/node-probe.ts')
  const config = readTsConfig(join(root, 'tsconfig.isomorphic.json'))
  const host = ts.createCompilerHost(config.options)
  const readFile = host.readFile.bind(host)
  host.readFile = (path) => (resolve(path) === probePath ? probe : readFile(path))
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (path) => resolve(path) === probePath || fileExists(path)
  const program = ts.createProgram([...config.fileNames, probePath], config.options, host)
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ({
    file: diagnostic.file ? relative(root, diagnostic.file.fileName) : '',
    message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
  }))
}

describe('package', () => {
  it('sends the version package.json declares', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string }
    expect(LIBRARY).toEqual({ name: pkg.name, version: pkg.version })
  })

  it('compiles the isomorphic entries without Node: a Node global or a Node-only import below them is a type error', () => {
    const diagnostics = isomorphicDiagnostics(
      [
        "import { readFileSync } from 'node:fs'",
        "import 'node:http'",
        "import { request } from 'undici'",
        "import { Queue } from 'bullmq'",
        'export const uses = [readFileSync, request, Queue, Buffer.alloc(1), process.env]',
      ].join('\n'),
    )
    // Everything the entries import compiles; the probe fails once per use of Node.
    expect(diagnostics.filter((diagnostic) => diagnostic.file !== 'src/core/node-probe.ts')).toEqual([])
    const messages = diagnostics.map((diagnostic) => diagnostic.message).join('\n')
    expect(messages).toMatch(/Cannot find module 'node:fs'/)
    expect(messages).toMatch(/Cannot find module 'node:http'/)
    expect(messages).toMatch(/has no exported member 'request'/)
    expect(messages).toMatch(/has no exported member 'Queue'/)
    expect(messages).toMatch(/Cannot find name 'Buffer'/)
    expect(messages).toMatch(/Cannot find name 'process'/)
  })

  it('leaves @opentelemetry/api, an optional peer, to src/webhook/otel: no other source imports it', () => {
    const otel = join(root, 'src/webhook/otel') + sep
    const importers = sourceFiles(join(root, 'src'))
      .filter((file) => importsOf(file).some((specifier) => specifier.startsWith('@opentelemetry/')))
      .map((file) => relative(root, file))
    expect(importers.length).toBeGreaterThan(0)
    expect(importers.filter((file) => !join(root, file).startsWith(otel))).toEqual([])
  })

  it('reads nothing outside the repository from tests, benches, scripts or examples (a fresh clone has only itself)', () => {
    const files = ['test', 'bench', 'scripts', 'examples'].flatMap((dir) =>
      sourceFiles(join(root, dir), ['.ts', '.mjs', '.js']),
    )
    const outside = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/new URL\(\s*['"](\.\.?\/[^'"]*)['"]\s*,\s*import\.meta\.url/g)]
        .map((match) => resolve(dirname(file), match[1] ?? ''))
        // The repository's own folder is in it: `resolve` leaves its trailing slash off.
        .filter((target) => !`${target}/`.startsWith(root))
        .map((target) => `${file} -> ${target}`),
    )
    expect(files.length).toBeGreaterThan(50)
    expect(outside).toEqual([])
  })

  it('starts the CLI without the optional peers: dist/cli.js loads bullmq only through the package, when a queue command runs', () => {
    const bundle = readFileSync(join(root, 'dist/cli.js'), 'utf8')
    expect(bundle).not.toMatch(/^import\b[^;]*["'](bullmq|ioredis)["']/m)
    expect(bundle).toContain('"eventwire/webhook/bullmq"')
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

  it('keeps the CLI on the public entry points: no CLI file imports a library file that is not an entry', () => {
    const cliFiles = sourceFiles(join(root, 'src/cli'))
    const internal = cliFiles.flatMap((file) => internalImports(file, readFileSync(file, 'utf8')))
    expect(internal).toEqual([])
    // The check sees every kind of import, and lets the entries and the CLI's own files through.
    const probe = join(root, 'src/cli/dev/probe.ts')
    expect(
      internalImports(
        probe,
        [
          "import { toWireMessage } from '../../core/validate.js'",
          "import type { Signer } from '../../webhook/signing/signer.js'",
          "export { EngineParts } from '../../webhook/delivery/engine-parts.js'",
          "import '../../core/debug.js'",
          "const lazy = import('../../webhook/bullmq/worker.js')",
          "import { Client } from '../../index.js'",
          "import { WebhookDestination } from '../../webhook/index.js'",
          "import { defaultPlatform } from '../../webhook/platform/node.js'",
          "import { createHttp1Transport } from '../../webhook/node-only.js'",
          "import { WebhookQueue } from '../../webhook/bullmq/index.js'",
          "import { version } from '../../../package.json'",
          "import { paint } from '../colors.js'",
          "import { parseBatch } from './batch.js'",
        ].join('\n'),
      ),
    ).toEqual(
      [
        'src/core/validate.ts',
        'src/webhook/signing/signer.ts',
        'src/webhook/delivery/engine-parts.ts',
        'src/core/debug.ts',
        'src/webhook/bullmq/worker.ts',
        'src/webhook/platform/node.ts',
      ].map((target) => `src/cli/dev/probe.ts imports ${target}`),
    )
  })
})

/** The oldest Node that `engines` admits (">=20.18.1" -> 20.18.1). */
const FLOOR = /^>=\s*(\d+\.\d+\.\d+)$/.exec(
  (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node,
)?.[1]

/** Sends one event with the package's Client and prints the Node version and the client's debug lines. */
const SEND = (load: string) => `${load}
const lines = []
const logger = { log: (line) => lines.push(line), error: (line) => lines.push(line) }
const client = new Client('key', { endpoint: process.argv[2], verbose: true, logger })
client.track({ userId: 'u1', event: 'Packed' })
client.close().then(() => console.log(JSON.stringify({ version: process.version, lines })))
`

describe('the packed tarball, as Node loads it', () => {
  let app = ''
  const nodes: Record<string, string> = {}

  // dist/ is built once by test/global-setup.ts. The tarball is unpacked where node_modules would
  // have it: the package has no runtime dependency.
  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), 'eventwire-package-'))
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', app], { cwd: root, encoding: 'utf8' }),
    ) as Array<{ filename: string }>
    mkdirSync(join(app, 'node_modules'))
    execFileSync('tar', ['-xzf', join(app, packed?.filename ?? ''), '-C', join(app, 'node_modules')])
    renameSync(join(app, 'node_modules', 'package'), join(app, 'node_modules', 'eventwire'))
    writeFileSync(join(app, 'send.cjs'), SEND("const { Client } = require('eventwire')"))
    writeFileSync(join(app, 'send.mjs'), SEND("const { Client } = await import('eventwire')"))
    nodes[process.version] = process.execPath
    // The engines floor, from the npm registry's `node` package (npx keeps it in its cache).
    nodes[`v${FLOOR}`] = execFileSync('npx', ['-y', `node@${FLOOR}`, '-p', 'process.execPath'], {
      encoding: 'utf8',
    }).trim()
  }, 120_000)
  afterAll(() => rmSync(app, { recursive: true, force: true }))

  it('loads every other webhook entry without @opentelemetry/api installed, and names it where it is needed', async () => {
    const script = [
      "const webhook = require('eventwire/webhook')",
      "const node = require('eventwire/webhook/node')",
      "import('eventwire/webhook').then(async (esm) => {",
      "  let missing = ''",
      "  try { await import('eventwire/webhook/otel') } catch (error) { missing = error.message }",
      "  let required = ''",
      "  try { require('eventwire/webhook/otel') } catch (error) { required = error.message }",
      '  console.log(JSON.stringify({ cjs: typeof webhook.WebhookDestination, node: typeof node.createHttp1Transport, esm: typeof esm.WebhookDestination, missing, required }))',
      '})',
    ].join('\n')
    writeFileSync(join(app, 'otel-absent.cjs'), script)
    const { stdout } = await promisify(execFile)(process.execPath, ['otel-absent.cjs'], { cwd: app, timeout: 20_000 })
    const printed = JSON.parse(stdout) as Record<string, string>
    expect(printed).toMatchObject({ cjs: 'function', node: 'function', esm: 'function' })
    expect(printed['missing']).toMatch(/@opentelemetry\/api/)
    expect(printed['required']).toMatch(/@opentelemetry\/api/)
  })

  it.each([
    ['require', 'send.cjs', 'this Node'],
    ['import', 'send.mjs', 'this Node'],
    ['require', 'send.cjs', 'the engines floor'],
    ['import', 'send.mjs', 'the engines floor'],
  ])("%s('eventwire') (%s) on %s: a Client that sends through its HTTP/1.1 stack", async (_how, script, which) => {
    const version = which === 'this Node' ? process.version : `v${FLOOR}`
    const sink = await startSink()
    try {
      const { stdout } = await promisify(execFile)(nodes[version] ?? '', [script, sink.url], {
        cwd: app,
        timeout: 20_000,
      })
      const printed = JSON.parse(stdout) as { version: string; lines: string[] }
      expect(printed.version).toBe(version)
      expect(printed.lines[0]).toBe(`sending to ${sink.url}/v1/batch with http1`)
      expect(sink.delivered().map((message) => message['event'])).toEqual(['Packed'])
      // fetch adds headers of its own (sec-fetch-mode, accept-language); the HTTP/1.1 stack sends ours alone.
      expect(sink.requests[0]?.headers['sec-fetch-mode']).toBeUndefined()
      expect(sink.requests[0]?.headers['user-agent']).toBe(`eventwire/${LIBRARY.version}`)
    } finally {
      await sink.close()
    }
  })
})
