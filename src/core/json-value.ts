import { ValidationError } from './errors/validation-error.js'

/** Deeper nesting is refused: it is almost always a circular structure or a mistake. */
export const MAX_DEPTH = 64

function refuse(path: string, what: string): never {
  throw new ValidationError('ERR_NOT_SERIALIZABLE', path, `\`${path}\` ${what}: it cannot be sent as JSON without loss.`)
}

function isPlain(value: object): boolean {
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * Checks that a value survives JSON unchanged, so that what is sent is what was given. Refused,
 * naming the path: `BigInt`, `NaN` and infinities (JSON would write `null`), functions and
 * symbols, `undefined` inside arrays (would become `null`), invalid dates, `Map`, `Set` and other
 * non-plain objects without a `toJSON` method (they would become `{}` or lose their prototype),
 * and nesting deeper than {@link MAX_DEPTH} (or circular). Allowed: plain objects and arrays,
 * strings (lone surrogates are escaped), finite numbers, booleans, null, valid dates (sent as ISO
 * 8601) and objects with their own `toJSON`. `undefined` as an object property means absent, as
 * in JSON.
 *
 * @throws {@link ValidationError} `ERR_NOT_SERIALIZABLE` with `field` set to the path.
 */
export function checkJsonValue(value: unknown, path: string, depth = 0): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return
    case 'number':
      if (!Number.isFinite(value)) refuse(path, `is ${value}`)
      return
    case 'bigint':
      refuse(path, 'is a BigInt (send it as a string)')
    case 'function':
    case 'symbol':
      refuse(path, `is a ${typeof value}`)
    case 'undefined':
      return
  }
  if (value === null) return
  if (depth >= MAX_DEPTH) refuse(path, `is nested deeper than ${MAX_DEPTH} levels (or circular)`)
  const object = value as object
  if (Array.isArray(object)) {
    object.forEach((item, index) => {
      if (item === undefined) refuse(`${path}[${index}]`, 'is undefined inside an array (JSON would write null)')
      checkJsonValue(item, `${path}[${index}]`, depth + 1)
    })
    return
  }
  if (object instanceof Date) {
    if (Number.isNaN(object.getTime())) refuse(path, 'is an invalid Date')
    return
  }
  // An object that says how it becomes JSON is taken at its word (decimal and date libraries do).
  if (typeof (object as { toJSON?: unknown }).toJSON === 'function') return
  if (!isPlain(object)) refuse(path, `is a ${object.constructor?.name ?? 'non-plain object'}; send a plain object or array`)
  for (const key in object) {
    if (Object.hasOwn(object, key)) checkJsonValue((object as Record<string, unknown>)[key], `${path}.${key}`, depth + 1)
  }
}
