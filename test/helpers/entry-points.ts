import { readFileSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'
import { readTsConfig } from './tsconfig.js'
import tsupConfig from '../../tsup.config.js'

/** The repository root, with a trailing separator. */
export const root = dirname(fileURLToPath(new URL('../../package.json', import.meta.url))) + sep

/** One entry of package.json's `exports`, traced through tsup.config.ts to its sources. */
export interface EntryPoint {
  /** What users import: `eventwire/webhook`. */
  readonly specifier: string
  /** Its source, relative to the root (every condition resolves to builds of this one file). */
  readonly file: string
}

type Conditions = { readonly [condition: string]: string | Conditions }

/** The library build's entries in tsup.config.ts: output name to source (`webhook` -> `src/webhook/index.ts`). */
function tsupEntries(): Readonly<Record<string, string>> {
  const configs = (Array.isArray(tsupConfig) ? tsupConfig : [tsupConfig]) as Array<{ entry?: unknown }>
  const library = configs.find(
    (config) => typeof config.entry === 'object' && config.entry !== null && 'index' in config.entry,
  )
  if (!library) throw new Error('tsup.config.ts has no build with an `index` entry')
  return library.entry as Record<string, string>
}

/** Every file a subpath resolves to, by the condition that picks it (`import` and `require` alike). */
export function targets(conditions: string | Conditions, condition = 'default'): Array<[string, string]> {
  if (typeof conditions === 'string') return [[condition, conditions]]
  return Object.entries(conditions).flatMap(([key, value]) =>
    targets(value, key === 'import' || key === 'require' || key === 'default' ? condition : key),
  )
}

/** The source a built file comes from (`./dist/webhook.cjs` -> `src/webhook/index.ts`), per tsup.config.ts. */
export function sourceOfTarget(target: string): string | undefined {
  const name = /^\.\/dist\/(.+)\.c?js$/.exec(target)?.[1]
  return name === undefined ? undefined : tsupEntries()[name]
}

/**
 * The public entry points, read from package.json's `exports` and tsup.config.ts (not listed by
 * hand): a new subpath or build shows up here, and in every test that walks them.
 */
export function entryPoints(): EntryPoint[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string
    exports: Record<string, string | Conditions>
  }
  return Object.entries(pkg.exports)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, conditions]) => {
      const sources = new Set<string>()
      for (const [, target] of targets(conditions)) {
        if (target.endsWith('.d.ts') || target.endsWith('.d.cts')) continue
        const source = sourceOfTarget(target)
        if (source === undefined) throw new Error(`${subpath}: ${target} is not built from any tsup entry`)
        sources.add(source)
      }
      const [file, ...others] = sources
      if (file === undefined || others.length > 0)
        throw new Error(`${subpath}: expected builds of one source, found ${[...sources].join(', ') || 'none'}`)
      return { specifier: subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`, file }
    })
}

/** Every source file that is an entry point. */
export function entryFiles(): string[] {
  return entryPoints().map((entry) => entry.file)
}

/** What an entry exports, and how. */
export type ExportKind = 'class' | 'function' | 'constant' | 'type'

/** One name an entry exports. */
export interface ExportInfo {
  readonly name: string
  readonly kind: ExportKind
  /** Its TSDoc summary, as the compiler reads it (empty when it has none). */
  readonly doc: string
}

/** Export statements that do not name what they export: `export *`, `export * as x`, `export default`. */
export interface EntrySyntax {
  /** Statements other than an `export { ... } from` list, as written. */
  readonly other: string[]
  /** Names exported with `export type { ... }` or `export { type ... }`. */
  readonly typeOnly: string[]
  /** Names exported as values. */
  readonly values: string[]
}

/** Reads an entry file's statements: it should be nothing but named export lists. */
export function entrySyntax(file: string): EntrySyntax {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true)
  const other: string[] = []
  const typeOnly: string[] = []
  const values: string[] = []
  for (const statement of source.statements) {
    if (
      ts.isExportDeclaration(statement) &&
      statement.exportClause !== undefined &&
      ts.isNamedExports(statement.exportClause) &&
      statement.moduleSpecifier !== undefined
    ) {
      for (const element of statement.exportClause.elements)
        (statement.isTypeOnly || element.isTypeOnly ? typeOnly : values).push(element.name.text)
    } else {
      other.push(statement.getText(source))
    }
  }
  return { other, typeOnly, values }
}

let program: { checker: ts.TypeChecker; program: ts.Program } | undefined

/** One program over every entry file, with the repository's compiler options. */
function compile(): { checker: ts.TypeChecker; program: ts.Program } {
  if (program) return program
  const config = readTsConfig(join(root, 'tsconfig.json'))
  const built = ts.createProgram(
    entryFiles().map((file) => join(root, file)),
    config.options,
  )
  program = { program: built, checker: built.getTypeChecker() }
  return program
}

/**
 * Every name an entry file exports, types included, as the compiler sees it (so a star export
 * would be expanded too), with its kind and TSDoc summary.
 */
export function compiledExports(file: string): ExportInfo[] {
  const { checker, program: built } = compile()
  const source = built.getSourceFile(join(root, file))
  const module = source && checker.getSymbolAtLocation(source)
  if (!module) throw new Error(`${file} is not a module`)
  const typeOnly = new Set(entrySyntax(file).typeOnly)
  return checker.getExportsOfModule(module).map((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    const kind: ExportKind = typeOnly.has(symbol.name)
      ? 'type'
      : target.flags & ts.SymbolFlags.Class
        ? 'class'
        : target.flags & ts.SymbolFlags.Function
          ? 'function'
          : target.flags & ts.SymbolFlags.Variable
            ? 'constant'
            : 'type'
    return { name: symbol.name, kind, doc: ts.displayPartsToString(target.getDocumentationComment(checker)).trim() }
  })
}

/** The names an entry file exports at run time, read by importing it. */
export async function runtimeExports(file: string): Promise<string[]> {
  const module = (await import(pathToFileURL(join(root, file)).href)) as Record<string, unknown>
  return Object.keys(module).sort()
}
