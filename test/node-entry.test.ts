import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ClientBase } from '../src/client/client-base.js'
import * as isomorphic from '../src/index.js'
import * as node from '../src/node.js'
import { startSink, type Sink } from './helpers/sink.js'

const root = fileURLToPath(new URL('..', import.meta.url))

/** Every name an entry exports, types included, as the compiler sees it. */
function exportedNames(program: ts.Program, file: string): string[] {
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(join(root, file))
  const module = source && checker.getSymbolAtLocation(source)
  if (!module) throw new Error(`${file} is not a module`)
  return checker
    .getExportsOfModule(module)
    .map((symbol) => symbol.name)
    .sort()
}

let sink: Sink | undefined
afterEach(async () => {
  await sink?.close()
  sink = undefined
})

describe('the Node build of eventwire (src/node.ts)', () => {
  it('exports the very names src/index.ts exports, types included', () => {
    const program = ts.createProgram([join(root, 'src/index.ts'), join(root, 'src/node.ts')], {
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
      noEmit: true,
    })
    const names = exportedNames(program, 'src/index.ts')
    expect(names.length).toBeGreaterThan(30)
    expect(exportedNames(program, 'src/node.ts')).toEqual(names)
  })

  it('exports the same values, Client aside: the same classes, so instanceof and the guards agree', () => {
    const nodeValues = new Map(Object.entries(node))
    expect([...nodeValues.keys()].sort()).toEqual(Object.keys(isomorphic).sort())
    for (const [name, value] of Object.entries(isomorphic)) {
      if (name !== 'Client') expect(nodeValues.get(name), name).toBe(value)
    }
    expect(node.Client).not.toBe(isomorphic.Client)
    expect(new node.Client('key')).toBeInstanceOf(ClientBase)
    expect(new isomorphic.Client('key')).toBeInstanceOf(ClientBase)
  })
})

describe('which transport a Client sends with', () => {
  /** Sends one message with a fresh client; returns its debug lines and the headers the sink got. */
  async function sendOne(Client: typeof node.Client, options: isomorphic.ClientOptions = {}) {
    sink = await startSink()
    const lines: string[] = []
    const logger = { log: (line: string) => lines.push(line), error: (line: string) => lines.push(line) }
    const client = new Client('key', { endpoint: sink.url, verbose: true, logger, ...options })
    client.track({ userId: 'u1', event: 'E' })
    await client.close()
    expect(sink.delivered()).toHaveLength(1)
    return { lines, headers: sink.requests[0]?.headers ?? {} }
  }

  it("the Node build: undici's Pool (fetch's own headers, such as sec-fetch-mode, are absent)", async () => {
    const { lines, headers } = await sendOne(node.Client)
    expect(lines[0]).toBe(`sending to ${sink?.url}/v1/batch with undici`)
    expect(headers['sec-fetch-mode']).toBeUndefined()
  })

  it('the Node build given a fetch: ky over that fetch', async () => {
    let calls = 0
    const fetch: typeof globalThis.fetch = (input, init) => {
      calls++
      return globalThis.fetch(input, init)
    }
    const { lines, headers } = await sendOne(node.Client, { fetch })
    expect(lines[0]).toMatch(/ with fetch$/)
    expect(calls).toBe(1)
    expect(headers['sec-fetch-mode']).toBe('cors')
  })

  it('the isomorphic build: ky over the global fetch', async () => {
    const { lines, headers } = await sendOne(isomorphic.Client)
    expect(lines[0]).toMatch(/ with fetch$/)
    expect(headers['sec-fetch-mode']).toBe('cors')
  })

  it("close() lets go of the Node build's connections", async () => {
    await sendOne(node.Client)
    // Left open, the idle connection would last until a keep-alive timeout (4 s or more).
    await vi.waitFor(() => expect(sink?.connections()).toEqual({ opened: 1, closed: 1 }), { timeout: 2_000 })
  })
})
