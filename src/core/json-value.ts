import { ValidationError } from './errors/validation-error.js'

/** A value JSON writes as itself. */
export type JsonPrimitive = string | number | boolean | null

/**
 * An object that says how it becomes JSON, as `Date` does (sent as ISO 8601) and decimal, money
 * and date libraries' values do. `JSON.stringify` calls `toJSON(key)`, so one with fewer
 * parameters fits too.
 */
export interface JsonSerializable {
  toJSON(key: string): unknown
}

/**
 * Any value that survives JSON unchanged, as the client checks at run time: no
 * `BigInt`, functions, symbols or `undefined` array items. `NaN`, infinities and invalid dates are
 * numbers and `Date`s to the type system, and a sparse array is an array, so only the run-time
 * check refuses them. `-0` is a number JSON writes as `0`, and is sent so.
 */
export type JsonValue = JsonPrimitive | JsonSerializable | readonly JsonValue[] | JsonObject

/**
 * A JSON object: traits, properties, context. A property set to `undefined` is left out, as
 * `JSON.stringify` does. An `interface` without an index signature is not assignable to it (TypeScript
 * gives interfaces no implicit index signature); the calls that take traits and properties accept
 * those through {@link JsonObjectInput}.
 */
export interface JsonObject {
  [key: string]: JsonValue | undefined
}

/**
 * `T` as JSON can carry it: every `BigInt`, function and symbol becomes a string type whose text
 * is the compile error a user reads, at the property that holds it ("Type 'bigint' is not
 * assignable to type '"a BigInt is not a JSON value"'", where `never` would say nothing of why);
 * an array that may hold `undefined` is refused; everything else stays as it is. It exists
 * for types {@link JsonValue} cannot take, interfaces without an index signature, by walking
 * their properties instead.
 *
 * Limits, where the run-time check still decides: values typed `unknown` or `any` pass (nothing
 * is known about them), and a class instance without methods reads as a plain object (its
 * prototype is not part of its type) though the run-time check refuses it unless it has `toJSON`.
 */
export type JsonInput<T> = unknown extends T
  ? T
  : T extends JsonValue | undefined
    ? T
    : T extends bigint
      ? 'a BigInt is not a JSON value'
      : T extends symbol
        ? 'a symbol is not a JSON value'
        : T extends ((...args: never[]) => unknown) | (abstract new (...args: never[]) => unknown)
          ? 'a function is not a JSON value'
          : T extends readonly (infer Item)[]
            ? // An undefined item would become null: the items' type leaves it out, so an array that may hold one does not fit.
              readonly JsonInput<Exclude<Item, undefined>>[]
            : { [Key in keyof T]: JsonInput<T[Key]> }

/**
 * The type of `traits` and `properties`: a JSON object given as any object type, interfaces
 * included, checked by {@link JsonInput}. Arrays are refused: the field must be an object.
 */
export type JsonObjectInput<T> = T extends readonly unknown[] ? JsonObject : JsonInput<T>

/** Deeper nesting is refused: it is almost always a mistake (a cycle is named as such first). */
export const MAX_DEPTH = 64

function refusal(path: string, what: string): ValidationError {
  return new ValidationError(
    'ERR_NOT_SERIALIZABLE',
    path,
    `\`${path}\` ${what}: it cannot be sent as JSON without loss.`,
  )
}

/** What `toJSON` gives for the value at `path`, called as JSON.stringify calls it: with the value's key. */
function replacement(object: { toJSON(key: string): unknown }, key: string, path: string): unknown {
  try {
    const value = object.toJSON(key)
    if (value === undefined) throw refusal(path, 'has a toJSON that returns undefined (JSON would drop it)')
    return value
  } catch (error) {
    if (error instanceof ValidationError) throw error
    throw new ValidationError(
      'ERR_NOT_SERIALIZABLE',
      path,
      `\`${path}\` has a toJSON that threw: it cannot be sent as JSON.`,
      { cause: error },
    )
  }
}

/** True for an object literal or a null-prototype object: what JSON writes key by key. */
export function isPlain(value: object): boolean {
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * Checks that a value survives JSON unchanged, so that what is sent is what was given. Refused,
 * naming the path: `BigInt`, `NaN` and infinities (JSON would write `null`), functions and
 * symbols, `undefined` and holes inside arrays (would become `null`), arrays with named
 * properties (JSON drops them), invalid dates, `Map`, `Set` and other
 * non-plain objects without a `toJSON` method (they would become `{}` or lose their prototype),
 * a value that contains itself (named as circular, with the path it refers back to), and nesting
 * deeper than {@link MAX_DEPTH}. Allowed: plain objects and arrays,
 * strings (lone surrogates are escaped), finite numbers, booleans, null, valid dates (sent as ISO
 * 8601) and objects with their own `toJSON`, whose result is checked by the same rules (it is what
 * is sent; a `toJSON` that throws or returns `undefined` is refused). `undefined` as an object property means absent, as
 * in JSON. `-0` is sent as `0`, as JSON writes it: the two are equal (`-0 === 0`), and refusing it
 * would throw on the results of ordinary arithmetic (`Math.round(-0.4)`).
 *
 * @throws {@link ValidationError} `ERR_NOT_SERIALIZABLE` with `field` set to the path.
 */
export function checkJsonValue(value: unknown, path: string, depth = 0): void {
  // The value sits under the key `path` in the message JSON.stringify writes.
  walk(value, { path, key: path, depth, replaced: false }, { objects: [], paths: [] })
}

/** Where a value sits: its path for messages, its key for `toJSON`, and how deep it is nested. */
interface Place {
  readonly path: string
  readonly key: string
  readonly depth: number
  /** The value is what a `toJSON` returned: JSON.stringify calls `toJSON` once, not on its result. */
  readonly replaced: boolean
}

/** The objects on the way down to a value and their paths, to name a cycle. */
interface Ancestors {
  readonly objects: object[]
  readonly paths: string[]
}

/**
 * Whether JSON writes `value` as it is with nothing to check inside: a string, a boolean, a finite
 * number or `null`. Most values are; skipping the walk for them saves building a path and a
 * {@link Place} per property, which was most of the check's cost.
 */
function isSimple(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(value)
    default:
      return value === null
  }
}

function walk(value: unknown, place: Place, ancestors: Ancestors): void {
  const { path, depth } = place
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return
    case 'number':
      if (!Number.isFinite(value)) throw refusal(path, `is ${value}`)
      return
    case 'bigint':
      throw refusal(path, 'is a BigInt (send it as a string)')
    case 'function':
    case 'symbol':
      throw refusal(path, `is a ${typeof value}`)
    case 'undefined':
      return
  }
  if (value === null) return
  const object = value as object
  const parent = ancestors.objects.indexOf(object)
  if (parent !== -1) throw refusal(path, `refers back to \`${ancestors.paths[parent]}\` (a circular structure)`)
  if (depth >= MAX_DEPTH) throw refusal(path, `is nested deeper than ${MAX_DEPTH} levels`)
  ancestors.objects.push(object)
  ancestors.paths.push(path)
  const child = (key: string, childPath: string): Place => ({ path: childPath, key, depth: depth + 1, replaced: false })
  if (Array.isArray(object)) {
    // A loop over indexes, not forEach: forEach skips the holes of a sparse array.
    for (let index = 0; index < object.length; index++) {
      const item: unknown = object[index]
      if (isSimple(item)) continue
      const itemPath = `${path}[${index}]`
      if (!Object.hasOwn(object, index)) throw refusal(itemPath, 'is a hole in a sparse array (JSON would write null)')
      if (item === undefined) throw refusal(itemPath, 'is undefined inside an array (JSON would write null)')
      walk(item, child(String(index), itemPath), ancestors)
    }
    if (Object.keys(object).length > object.length)
      throw refusal(path, 'is an array with named properties (JSON would drop them)')
  } else if (!place.replaced && object instanceof Date) {
    if (Number.isNaN(object.getTime())) throw refusal(path, 'is an invalid Date')
  } else if (!place.replaced && typeof (object as { toJSON?: unknown }).toJSON === 'function') {
    // An object that says how it becomes JSON (decimal and date libraries do): what it says is
    // what is sent, in its place, so that is what is checked (a toJSON may return NaN, a function, undefined).
    walk(
      replacement(object as { toJSON(key: string): unknown }, place.key, path),
      { ...place, replaced: true },
      ancestors,
    )
  } else {
    if (!isPlain(object))
      throw refusal(path, `is a ${object.constructor?.name ?? 'non-plain object'}; send a plain object or array`)
    for (const key in object) {
      if (!Object.hasOwn(object, key)) continue
      const item = (object as Record<string, unknown>)[key]
      if (!isSimple(item)) walk(item, child(key, `${path}.${key}`), ancestors)
    }
  }
  ancestors.objects.pop()
  ancestors.paths.pop()
}
