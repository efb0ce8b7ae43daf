import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/index.js'
import { thrownBy } from '../helpers/thrown.js'
import { checkJsonValue, MAX_DEPTH } from '../../src/core/json-value.js'

/** The ValidationError checkJsonValue throws for `value` under the field `path`, or undefined. */
function refusal(value: unknown, path = 'properties'): ValidationError | undefined {
  const thrown = thrownBy(() => checkJsonValue(value, path))
  if (thrown === undefined || thrown instanceof ValidationError) return thrown
  throw thrown
}

/** An object whose toJSON records the key it is called with. */
function recorder(keys: string[]): { toJSON(key: string): string } {
  return {
    toJSON(key: string) {
      keys.push(key)
      return 'x'
    },
  }
}

describe('checkJsonValue and toJSON', () => {
  it('calls toJSON with the key JSON.stringify passes: the property name, the index as text, the field name at the top', () => {
    const build = (keys: string[]) => ({
      top: recorder(keys),
      nested: { 'with.dot': recorder(keys), 'with[bracket]': recorder(keys), deeper: { inner: recorder(keys) } },
      list: Array.from({ length: 12 }, () => recorder(keys)),
    })
    const fromJson: string[] = []
    JSON.stringify({ properties: build(fromJson) })
    const fromCheck: string[] = []
    checkJsonValue(build(fromCheck), 'properties')
    expect(fromCheck).toEqual(fromJson)
    expect(fromCheck).toContain('11')
    expect(fromCheck).toContain('with.dot')

    const topKeys: string[] = []
    checkJsonValue(recorder(topKeys), 'properties')
    expect(topKeys).toEqual(['properties'])
  })

  // JSON.stringify calls toJSON once per value; what it returns is written as it is, so an object
  // it returns is written key by key (a Date as `{}`, a toJSON property dropped as a function).
  it.each<[string, unknown, string]>([
    ['a Date', { toJSON: () => new Date(0) }, 'properties.value'],
    ['an object with its own toJSON', { toJSON: () => ({ toJSON: () => 1 }) }, 'properties.value.toJSON'],
  ])('refuses a toJSON that returns %s, which JSON would not turn into what it looks like', (_name, value, field) => {
    expect(JSON.stringify(value)).toBe('{}')
    expect(refusal({ value })).toMatchObject({ code: 'ERR_NOT_SERIALIZABLE', field })
  })

  it('accepts a toJSON that returns plain data, and checks that data in its place', () => {
    expect(refusal({ money: { toJSON: () => ({ amount: '5.00', currency: 'EUR' }) } })).toBeUndefined()
    expect(refusal({ money: { toJSON: () => ({ amount: Number.NaN }) } })?.field).toBe('properties.money.amount')
  })
})

describe('checkJsonValue: a refusal names what is wrong', () => {
  const sparse: unknown[] = [1]
  sparse[2] = 3
  const named = Object.assign([1], { extra: true })
  const nullPrototypeChain = Object.create(Object.create(null)) as object
  it.each<[string, unknown, string, RegExp]>([
    ['NaN', { a: Number.NaN }, 'properties.a', /NaN/],
    ['Infinity', { a: Number.POSITIVE_INFINITY }, 'properties.a', /Infinity/],
    ['a BigInt', { a: 1n }, 'properties.a', /BigInt.*string/],
    ['a function', { a: () => 1 }, 'properties.a', /function/],
    ['a symbol', { a: Symbol('s') }, 'properties.a', /symbol/],
    ['a hole', { a: sparse }, 'properties.a[1]', /hole/],
    ['undefined in an array', { a: [undefined] }, 'properties.a[0]', /undefined inside an array/],
    ['an array with named properties', { a: named }, 'properties.a', /named properties/],
    ['an invalid Date', { a: new Date('nope') }, 'properties.a', /invalid Date/],
    ['a Map', { a: new Map() }, 'properties.a', /Map/],
    ['an object without a constructor', { a: nullPrototypeChain }, 'properties.a', /non-plain object/],
    ['a toJSON that returns undefined', { a: { toJSON: () => undefined } }, 'properties.a', /returns undefined/],
    [
      'a toJSON that throws',
      {
        a: {
          toJSON: () => {
            throw new Error('no')
          },
        },
      },
      'properties.a',
      /threw/,
    ],
  ])('%s', (_name, value, field, reason) => {
    const error = refusal(value)
    expect(error).toMatchObject({ code: 'ERR_NOT_SERIALIZABLE', field })
    expect(error?.message).toMatch(reason)
    expect(error?.message).toContain(`\`${field}\``)
  })

  it(`names the depth limit of ${MAX_DEPTH} levels`, () => {
    let deep: unknown = 1
    for (let level = 0; level < MAX_DEPTH + 1; level++) deep = { next: deep }
    expect(refusal(deep)?.message).toMatch(new RegExp(`deeper than ${MAX_DEPTH} levels`))
  })
})
