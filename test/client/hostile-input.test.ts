import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Client, MessageTooLargeError, ValidationError } from '../../src/index.js'
import { MAX_DEPTH } from '../../src/core/json-value.js'
import { serializeMessage } from '../../src/core/serialize.js'
import { utf8ByteLength } from '../../src/core/utf8.js'
import { toWireMessage } from '../../src/core/validate.js'
import { thrownBy } from '../helpers/thrown.js'

/** What the client would put on the wire for these properties (the same two calls it makes). */
const wireJson = (properties: unknown) =>
  serializeMessage(toWireMessage('track', { userId: 'u1', event: 'E', properties }))

function client(): Client {
  return new Client('key', { endpoint: 'http://127.0.0.1:9', flushAfter: 600_000, maxQueueSize: 1_000_000 })
}

describe('hostile and broken input (property-based, fast-check)', () => {
  it('sends any JSON value losslessly, or refuses it as too large', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 6 })), (properties) => {
        let json: string
        try {
          json = wireJson(properties)
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError)
          return
        }
        // JSON's own round trip is the yardstick (it writes -0 as 0); an empty object is omitted.
        const expected = JSON.parse(JSON.stringify(properties)) as Record<string, unknown>
        expect(JSON.parse(json).properties).toEqual(Object.keys(expected).length === 0 ? undefined : expected)
      }),
      { numRuns: 300 },
    )
  })

  it('sends any value exactly as given (-0 as 0, the one documented change), or refuses it: sparse arrays and -0 included', () => {
    // A strict yardstick, unlike JSON's own round trip: toStrictEqual tells a hole from null and -0 from 0.
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.oneof(fc.string(), fc.double(), fc.constantFrom(-0, 0, null, true)),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.sparseArray(tie('value'), { maxLength: 6 }),
        fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
      ),
    }))
    const withoutNegativeZero = (item: unknown): unknown => {
      if (Object.is(item, -0)) return 0
      if (Array.isArray(item)) return item.map(withoutNegativeZero)
      if (typeof item === 'object' && item !== null)
        return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, withoutNegativeZero(inner)]))
      return item
    }
    fc.assert(
      fc.property(value, (given) => {
        let json: string
        try {
          json = wireJson({ given })
        } catch (error) {
          expect(error).toMatchObject({ code: 'ERR_NOT_SERIALIZABLE' })
          return
        }
        expect(JSON.parse(json).properties.given).toStrictEqual(withoutNegativeZero(given))
      }),
      { numRuns: 500 },
    )
  })

  it('answers anything at all with success or a typed error, and keeps accepting calls', () => {
    const target = client()
    fc.assert(
      fc.property(
        fc.anything({
          withBigInt: true,
          withMap: true,
          withSet: true,
          withDate: true,
          withTypedArray: true,
          withSparseArray: true,
          withNullPrototype: true,
          withObjectString: true,
          maxDepth: 4,
        }),
        (value) => {
          const before = target.pending
          try {
            target.track({ userId: 'u1', event: 'E', properties: { value } })
          } catch (error) {
            expect(error instanceof ValidationError || error instanceof MessageTooLargeError).toBe(true)
            expect(target.pending).toBe(before)
          }
          target.track({ userId: 'u1', event: 'Next' })
          expect(target.pending).toBeGreaterThan(before)
        },
      ),
      { numRuns: 500 },
    )
  })

  it('counts UTF-8 bytes exactly for any string, lone surrogates included, and sends them losslessly', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.string({
          unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
          maxLength: 5,
        }),
        (text, surrogates) => {
          const value = `${text}${surrogates}`
          const json = wireJson({ value })
          expect(utf8ByteLength(json)).toBe(new TextEncoder().encode(json).length)
          expect(JSON.parse(json).properties.value).toBe(value)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('keeps prototype-pollution keys as plain data and pollutes nothing', () => {
    const properties = JSON.parse(
      '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"prototype":1}',
    )
    const json = wireJson(properties)
    expect(JSON.parse(json).properties).toEqual(properties)
    expect(json).toContain('"__proto__":{"polluted":true}')
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
  })

  it.each<[string, unknown, string]>([
    ['a Map', new Map([['a', 1]]), 'properties.value'],
    ['a Set', new Set([1]), 'properties.value'],
    [
      'a class instance',
      new (class Money {
        amount = 5
      })(),
      'properties.value',
    ],
    ['NaN', Number.NaN, 'properties.value'],
    ['Infinity', Number.POSITIVE_INFINITY, 'properties.value'],
    ['a BigInt', 10n, 'properties.value'],
    ['a function', () => 1, 'properties.value'],
    ['a symbol', Symbol('s'), 'properties.value'],
    ['an invalid Date', new Date('nope'), 'properties.value'],
    ['undefined in an array', [1, undefined, 3], 'properties.value[1]'],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what is tested.
    ['a hole in an array', [1, , 3], 'properties.value[1]'],
    ['a hole at the end of an array', Object.assign([1], { length: 2 }), 'properties.value[1]'],
    ['an array with a named property', Object.assign([1], { extra: true }), 'properties.value'],
    ['a typed array', new Uint8Array(2), 'properties.value'],
  ])('refuses %s with ERR_NOT_SERIALIZABLE naming the path', (_name, value, path) => {
    const thrown = thrownBy(() => {
      wireJson({ value })
    })
    expect(thrown).toBeInstanceOf(ValidationError)
    expect(thrown).toMatchObject({ code: 'ERR_NOT_SERIALIZABLE', field: path })
  })

  it('refuses an object whose prototype has no constructor with ERR_NOT_SERIALIZABLE, as any other non-plain object', () => {
    const value = Object.create(Object.create(null) as object) as object
    expect(() => wireJson({ value })).toThrow(
      expect.objectContaining({ code: 'ERR_NOT_SERIALIZABLE', field: 'properties.value' }),
    )
  })

  it('neither sends nor checks inherited properties, as JSON ignores them, even when Object.prototype is polluted', () => {
    Object.defineProperty(Object.prototype, 'pollutedForTest', {
      value: 10n,
      enumerable: true,
      configurable: true,
      writable: true,
    })
    let json: string
    try {
      json = wireJson({ plan: 'pro' })
    } finally {
      delete (Object.prototype as Record<string, unknown>)['pollutedForTest']
    }
    expect(JSON.parse(json).properties).toStrictEqual({ plan: 'pro' })
  })

  it('sends -0 as 0, as JSON writes it, wherever it is', () => {
    expect(wireJson({ value: -0, list: [-0], nested: { deep: -0 } })).toContain(
      '"properties":{"value":0,"list":[0],"nested":{"deep":0}}',
    )
  })

  it('sends valid dates as ISO strings, objects with toJSON as they choose, and undefined properties as absent', () => {
    const json = wireJson({
      at: new Date(Date.UTC(2024, 0, 1)),
      money: { toJSON: () => '5.00 EUR' },
      missing: undefined,
    })
    expect(JSON.parse(json).properties).toEqual({ at: '2024-01-01T00:00:00.000Z', money: '5.00 EUR' })
  })

  /** Levels of nesting of a JSON value: 0 for a primitive, 1 more than its deepest item for an object or array. */
  const levels = (value: unknown): number =>
    typeof value === 'object' && value !== null ? 1 + Math.max(0, ...Object.values(value).map(levels)) : 0

  it.each<[string, ReadonlyArray<'object' | 'array'>]>([
    ['objects', ['object']],
    ['arrays', ['array']],
    ['objects and arrays in turn', ['array', 'object']],
  ])(
    `accepts a message whose JSON nests ${MAX_DEPTH} levels, the message itself counted, and refuses one level more, through %s`,
    (_name, kinds) => {
      /** `properties: { value }` with `value` nested `count` containers deep, and the path of the innermost one. */
      const nested = (count: number) => {
        let value: unknown = 'leaf'
        const segments: string[] = []
        for (let level = 0; level < count; level++) {
          const kind = kinds[level % kinds.length]
          value = kind === 'object' ? { inner: value } : [value]
          segments.unshift(kind === 'object' ? '.inner' : '[0]')
        }
        return { properties: { value }, innermost: `properties.value${segments.slice(0, -1).join('')}` }
      }
      // The message and `properties` are two of the levels.
      const deepest = nested(MAX_DEPTH - 2)
      expect(levels(JSON.parse(wireJson(deepest.properties)))).toBe(MAX_DEPTH)
      const tooDeep = nested(MAX_DEPTH - 1)
      const thrown = thrownBy(() => {
        wireJson(tooDeep.properties)
      })
      expect(thrown).toBeInstanceOf(ValidationError)
      expect(thrown).toMatchObject({ code: 'ERR_NOT_SERIALIZABLE', field: tooDeep.innermost })
    },
  )

  it('sends an object without a prototype (Object.create(null), as parsers and caches make) as the plain data it is', () => {
    const properties = Object.assign(Object.create(null) as Record<string, unknown>, {
      plan: 'pro',
      nested: Object.assign(Object.create(null) as object, { seats: 3 }),
    })
    expect(JSON.parse(wireJson(properties)).properties).toEqual({ plan: 'pro', nested: { seats: 3 } })
  })

  it('refuses a 10 MB string as too large, then accepts the next call', () => {
    const target = client()
    expect(() => target.track({ userId: 'u1', event: 'E', properties: { huge: 'x'.repeat(10_000_000) } })).toThrow(
      MessageTooLargeError,
    )
    expect(target.track({ userId: 'u1', event: 'E' })).toBe(true)
    expect(target.pending).toBe(1)
  })
})
