import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createContext, runInContext } from 'node:vm'
import { build } from 'esbuild'
import { beforeAll, describe, expect, it } from 'vitest'
import { isEventwireError, OptionsError, ValidationError } from '../src/index.js'

type Package = typeof import('../src/index.js')
type WebhookPackage = typeof import('../src/webhook/index.js')

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url))

/** What each copy throws for the same mistake: a track call without an event. */
function thrownBy(eventwire: Package): unknown {
  const client = new eventwire.Client('key', { endpoint: 'http://127.0.0.1:9', flushAfter: 600_000 })
  try {
    client.track({ userId: 'u1' } as never)
  } catch (error) {
    return error
  }
  throw new Error('track() did not throw')
}

let esm: Package
let cjs: Package
let webhookEsm: WebhookPackage
let webhookCjs: WebhookPackage

// dist/ is built once by test/global-setup.ts.
beforeAll(async () => {
  esm = (await import(/* @vite-ignore */ pathToFileURL(dist('index.js')).href)) as Package
  webhookEsm = (await import(/* @vite-ignore */ pathToFileURL(dist('webhook.js')).href)) as WebhookPackage
  const require = createRequire(import.meta.url)
  cjs = require(dist('index.cjs')) as Package
  webhookCjs = require(dist('webhook.cjs')) as WebhookPackage
})

describe('isEventwireError: one guard for every copy of the library', () => {
  it('recognises errors of the ESM build and the CommonJS build, loaded side by side, where instanceof cannot', () => {
    const fromEsm = thrownBy(esm)
    const fromCjs = thrownBy(cjs)
    // The reason for the guard: two builds, two classes.
    expect(fromCjs instanceof esm.ValidationError).toBe(false)
    expect(fromEsm instanceof cjs.ValidationError).toBe(false)
    for (const guard of [
      esm.isEventwireError,
      cjs.isEventwireError,
      webhookEsm.isEventwireError,
      webhookCjs.isEventwireError,
      isEventwireError,
    ]) {
      expect(guard(fromEsm)).toBe(true)
      expect(guard(fromCjs)).toBe(true)
    }
    expect(fromCjs).toMatchObject({ code: 'ERR_MISSING_EVENT', field: 'event' })
  })

  it('recognises errors made in another realm (a vm context running the browser bundle)', async () => {
    const bundle = await build({
      entryPoints: [dist('index.js')],
      bundle: true,
      format: 'iife',
      globalName: 'eventwire',
      platform: 'browser',
      // As a user's bundler sees the package: the repository's tsconfig.json maps the platform
      // imports to Node's sources, which esbuild would otherwise apply to dist/ as well.
      tsconfigRaw: {},
      write: false,
      logLevel: 'error',
    })
    // The Web APIs the bundle reads as it loads; its classes, Error included, are the context's own.
    const context = createContext({
      TextEncoder,
      TextDecoder,
      URL,
      AbortController,
      AbortSignal,
      Headers,
      Request,
      Response,
      fetch,
      setTimeout,
      clearTimeout,
    })
    runInContext(bundle.outputFiles[0]!.text, context)
    const foreign = runInContext("try { new eventwire.Client('') } catch (error) { error }", context) as unknown
    expect(foreign instanceof OptionsError).toBe(false)
    expect(foreign instanceof Error).toBe(false)
    expect(isEventwireError(foreign)).toBe(true)
    expect(cjs.isEventwireError(foreign)).toBe(true)
    expect(foreign).toMatchObject({ code: 'ERR_INVALID_OPTION', option: 'writeKey' })
    // And the other realm's guard knows ours.
    const theirGuard = runInContext('eventwire.isEventwireError', context) as (value: unknown) => boolean
    expect(theirGuard(new ValidationError('ERR_MISSING_EVENT', 'event', 'x'))).toBe(true)
  })

  it('says no to everything else: plain errors, look-alikes with a code, primitives', () => {
    for (const value of [
      new Error('x'),
      Object.assign(new Error('x'), { code: 'ERR_CLOSED', name: 'ClosedError' }),
      { code: 'ERR_CLOSED' },
      null,
      undefined,
      'ERR_CLOSED',
      42,
      Symbol.for('eventwire.error'),
    ]) {
      expect(isEventwireError(value)).toBe(false)
    }
  })

  it('keeps the brand out of sight: not enumerable, not in JSON, not in deep equality', () => {
    const error = new ValidationError('ERR_MISSING_EVENT', 'event', 'x')
    expect(Object.keys(error)).not.toContain(String(Symbol.for('eventwire.error')))
    expect(
      Object.getOwnPropertySymbols(error).every(
        (symbol) => !Object.getOwnPropertyDescriptor(error, symbol)?.enumerable,
      ),
    ).toBe(true)
    expect(JSON.stringify(error)).toBe(
      JSON.stringify({ code: 'ERR_MISSING_EVENT', name: 'ValidationError', field: 'event' }),
    )
  })
})
