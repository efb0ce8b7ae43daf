// The command line's time values: a zoned ISO 8601 time, epoch ms, or how long ago.
import { describe, expect, it } from 'vitest'
import { fieldArgument, InvalidArgumentError, timeArgument } from '../../src/cli/arguments.js'

describe('a time on the command line', () => {
  const now = () => 1_764_300_000_000
  it('reads how long ago in seconds, minutes, hours and days, counted back from now, never before 0', () => {
    expect(timeArgument('30s', now)).toBe(1_764_299_970_000)
    expect(timeArgument('90m', now)).toBe(1_764_294_600_000)
    expect(timeArgument('2h', now)).toBe(1_764_292_800_000)
    expect(timeArgument('1d', now)).toBe(1_764_213_600_000)
    expect(timeArgument('0s', now)).toBe(1_764_300_000_000)
    expect(timeArgument('99999999d', now)).toBe(0)
  })

  it('reads epoch ms and ISO 8601 with its zone, or a date alone (UTC)', () => {
    expect(timeArgument('1764300000000')).toBe(1_764_300_000_000)
    expect(timeArgument('0')).toBe(0)
    expect(timeArgument('2025-11-28T03:20:00Z')).toBe(1_764_300_000_000)
    expect(timeArgument('2025-11-28T04:20:00+01:00')).toBe(1_764_300_000_000)
    expect(timeArgument('2025-11-28T03:20:00.5Z')).toBe(1_764_300_000_500)
    expect(timeArgument('2025-11-28T03:20Z')).toBe(1_764_300_000_000)
    expect(timeArgument('2025-11-28')).toBe(1_764_288_000_000)
  })

  it('refuses a time without its zone, and what is not a time, saying the forms it takes', () => {
    for (const bad of [
      '2025-11-28T03:20:00',
      'yesterday',
      '2h ago',
      '-5',
      '1.5',
      '',
      '2025-13-40',
      '5w',
      '99999999999999999999',
    ]) {
      expect(() => timeArgument(bad, now), bad).toThrow(InvalidArgumentError)
    }
    expect(() => timeArgument('2025-11-28T03:20:00')).toThrow(/with its zone .*epoch ms.*90m, 2h, 1d/)
  })
})

describe('a key:=json field on the command line', () => {
  it('takes every number a JavaScript number holds exactly, however it is written', () => {
    for (const [text, value] of [
      ['3', 3],
      ['-0', -0],
      ['1.50', 1.5],
      ['0.1', 0.1],
      ['15e-1', 1.5],
      ['1E2', 100],
      ['9007199254740992', 2 ** 53],
      ['9007199254740994', 2 ** 53 + 2],
      ['1.7976931348623157e308', Number.MAX_VALUE],
      ['5e-324', Number.MIN_VALUE],
    ] as const) {
      expect(fieldArgument(`n:=${text}`)).toEqual({ n: value })
    }
    expect(fieldArgument('a:={"zip": 75001, "id": "12345678901234567890123"}')).toEqual({
      a: { zip: 75001, id: '12345678901234567890123' },
    })
  })

  it('refuses a number it would round, saying what it would send and to quote it', () => {
    expect(() => fieldArgument('big:=12345678901234567890123')).toThrow(
      new InvalidArgumentError(
        'the value of big:= has the number 12345678901234567890123, which a JavaScript number cannot hold exactly (it reads as 1.2345678901234568e+22). Send it as a string: big=12345678901234567890123.',
      ),
    )
    for (const text of [
      '9007199254740993',
      '0.30000000000000000001',
      '1e400',
      '-1e400',
      '1e-400',
      '[1, 2, 18446744073709551615]',
    ]) {
      expect(() => fieldArgument(`n:=${text}`)).toThrow(InvalidArgumentError)
    }
    expect(() => fieldArgument('a:={"n": 9007199254740993}')).toThrow(
      'Write it as a JSON string inside the value: "9007199254740993".',
    )
  })
})
