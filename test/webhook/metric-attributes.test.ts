// The destination attribute of the metrics: bounded in its values whatever the label function
// returns, made once per label, and left out where there is no destination or no label.
import { describe, expect, it } from 'vitest'
import {
  ATTR,
  DestinationAttributes,
  MAX_DESTINATION_LABELS,
  OTHER_DESTINATIONS,
} from '../../src/webhook/otel/attributes.js'

describe('DestinationAttributes', () => {
  it('adds the label, once per base and label, and leaves the base as it is without a destination or a label', () => {
    let asked = 0
    const labels = new DestinationAttributes((id) => {
      asked++
      return id === 'hidden' ? undefined : id.toUpperCase()
    })
    const base = { 'eventwire.webhook.outcome': 'delivered' }
    expect(labels.with(base, undefined)).toBe(base)
    expect(labels.with(base, 'hidden')).toBe(base)
    const acme = labels.with(base, 'acme')
    expect(acme).toEqual({ ...base, [ATTR.destination]: 'ACME' })
    expect(labels.with(base, 'acme')).toBe(acme)
    expect(asked).toBe(2)
    expect(labels.with({ other: 1 }, 'acme')).toEqual({ other: 1, [ATTR.destination]: 'ACME' })
    expect(asked).toBe(2)
  })

  it(`gives at most ${MAX_DESTINATION_LABELS} distinct values; the destinations past them share ${OTHER_DESTINATIONS}`, () => {
    const labels = new DestinationAttributes((id) => id)
    const base = {}
    const values = new Set<unknown>()
    for (let index = 0; index < 3 * MAX_DESTINATION_LABELS; index++)
      values.add(labels.with(base, `d${index}`)[ATTR.destination])
    expect(values.size).toBe(MAX_DESTINATION_LABELS + 1)
    expect(values.has(OTHER_DESTINATIONS)).toBe(true)
    // A value already given stays itself.
    expect(labels.with(base, 'd0')[ATTR.destination]).toBe('d0')
    const shared = new DestinationAttributes((id) => (id.startsWith('eu') ? 'eu' : 'us'))
    for (let index = 0; index < 3 * MAX_DESTINATION_LABELS; index++)
      expect(shared.with(base, `eu${index}`)[ATTR.destination]).toBe('eu')
  })

  it('leaves out what the label function returns that is not a string', () => {
    const labels = new DestinationAttributes(() => 42 as never)
    const base = {}
    expect(labels.with(base, 'acme')).toBe(base)
  })
})
