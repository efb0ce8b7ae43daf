import { describe, expect, it } from 'vitest'
import { toSnakeCase } from '../../src/webhook/event/audience.js'
import { AudienceSync, OptionsError } from '../../src/webhook/index.js'

describe('AudienceSync', () => {
  it('sends every member on the first sync, then only users added (true) or removed (false)', () => {
    const audience = new AudienceSync('Big Spenders')
    expect(audience.sync(['u1', 'u2'])).toEqual([
      { type: 'identify', userId: 'u1', traits: { big_spenders: true } },
      { type: 'identify', userId: 'u2', traits: { big_spenders: true } },
    ])
    expect(audience.sync(['u2', 'u3'])).toEqual([
      { type: 'identify', userId: 'u3', traits: { big_spenders: true } },
      { type: 'identify', userId: 'u1', traits: { big_spenders: false } },
    ])
    expect(audience.sync(['u3', 'u2'])).toEqual([])
    expect(audience.sync([])).toEqual([
      { type: 'identify', userId: 'u3', traits: { big_spenders: false } },
      { type: 'identify', userId: 'u2', traits: { big_spenders: false } },
    ])
  })

  it.each([
    ['Big Spenders', 'big_spenders'],
    ['bigSpenders', 'big_spenders'],
    ['  Churn-Risk (30d)! ', 'churn_risk_30d'],
    ['Café Lovers', 'cafe_lovers'],
    ['VIP', 'vip'],
  ])('names the trait %j as %j', (name, trait) => {
    expect(toSnakeCase(name)).toBe(trait)
    expect(new AudienceSync(name).trait).toBe(trait)
  })

  it('refuses a name with no letters or digits', () => {
    expect(() => new AudienceSync(' -- ')).toThrow(OptionsError)
  })
})
