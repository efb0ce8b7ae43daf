import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = dirname(fileURLToPath(new URL('../../package.json', import.meta.url)))

/**
 * The helpers through which a suite starts something outside the test process, and what. A suite
 * that imports one, itself or through other files of test/, is not a unit suite.
 */
export const OUTSIDE_HELPERS: Readonly<Record<string, string>> = {
  'test/helpers/redis.ts': 'starts redis-server',
  'test/helpers/cli.ts': 'runs the CLI that test/global-setup.ts bundles',
}

/** Suites that are not unit suites for a reason no import shows. */
export const OUTSIDE_SUITES: Readonly<Record<string, string>> = {
  'test/error-guard.test.ts': 'loads dist/, which test/global-setup.ts builds',
  'test/package.test.ts': 'loads dist/, which test/global-setup.ts builds',
  'test/bench-smoke.test.ts': 'runs the bench: redis-server and a dozen processes',
  'test/client/disk-queue-crash.test.ts': 'starts and kills 20 sending processes, each through tsx',
}

/** Every file vitest runs, relative to the root: test/**\/*.test.ts. */
export function testFiles(dir = 'test'): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) return testFiles(path)
    return path.endsWith('.test.ts') ? [path] : []
  })
}

/** The files of test/ that `file` imports, statically or with `import()`, relative to the root. */
function testImports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8')
  const specifiers = [
    ...text.matchAll(/\bfrom\s+['"](\.[^'"]+)['"]/g),
    ...text.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g),
  ].map((match) => match[1] ?? '')
  return specifiers
    .map((specifier) => relative(root, join(root, dirname(file), specifier.replace(/\.js$/, '.ts'))))
    .filter((path) => path.startsWith('test/') && existsSync(join(root, path)))
}

/** Why `file` is not a unit suite, or undefined when it is one. */
function outsideReason(file: string, seen = new Set<string>()): string | undefined {
  const reason = OUTSIDE_SUITES[file] ?? OUTSIDE_HELPERS[file]
  if (reason !== undefined || seen.has(file)) return reason
  seen.add(file)
  for (const imported of testImports(file)) {
    const found = outsideReason(imported, seen)
    if (found !== undefined) return found
  }
  return undefined
}

/** The suites `npm run test:unit` leaves out, each with why. */
export function outsideUnit(): Map<string, string> {
  return new Map(
    testFiles().flatMap((file) => {
      const reason = outsideReason(file)
      return reason === undefined ? [] : [[file, reason] as const]
    }),
  )
}
