import { describe, expect, it } from 'vitest'
import { colorsEnabled } from '../../src/cli/colors.js'

const terminal = { isTTY: true, hasColors: () => true }
const pipe = { isTTY: false, hasColors: () => false }
const dumbTerminal = { isTTY: true, hasColors: () => false }

describe('colorsEnabled', () => {
  it('colours a terminal that has colours, not a pipe or a dumb terminal', () => {
    expect(colorsEnabled(terminal, {})).toBe(true)
    expect(colorsEnabled(pipe, {})).toBe(false)
    expect(colorsEnabled(dumbTerminal, {})).toBe(false)
  })

  it('takes NO_COLOR to mean off and FORCE_COLOR on (but FORCE_COLOR=0), NO_COLOR winning', () => {
    expect(colorsEnabled(terminal, { NO_COLOR: '1' })).toBe(false)
    expect(colorsEnabled(pipe, { FORCE_COLOR: '1' })).toBe(true)
    expect(colorsEnabled(pipe, { FORCE_COLOR: '' })).toBe(true)
    expect(colorsEnabled(terminal, { FORCE_COLOR: '0' })).toBe(false)
    expect(colorsEnabled(pipe, { NO_COLOR: '1', FORCE_COLOR: '1' })).toBe(false)
  })
})
