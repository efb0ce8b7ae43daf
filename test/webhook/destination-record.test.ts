// A destination of the registry, checked before anything is written and again when read back:
// what it may be, what each wrong field is told, and what the registry stores of it.
import { describe, expect, it } from 'vitest'
import { OptionsError } from '../../src/index.js'
import {
  byId,
  resolveDestination,
  resolveNewDestination,
  whyNotDestinationId,
} from '../../src/webhook/delivery/destination-record.js'

const url = 'https://hooks.acme.example/in'
const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`

/** The error `resolveDestination(value)` throws, as option and message. */
function refusal(value: unknown, prefix?: string): { option: string; message: string } {
  try {
    resolveDestination(value, prefix)
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError)
    return { option: (error as OptionsError).option, message: (error as Error).message }
  }
  throw new Error('not refused')
}

describe('byId', () => {
  it('orders destinations by id, as list() gives them', () => {
    const ids = ['globex', 'acme', 'Zeta', 'a.b', 'a-b'].map((id) => ({ id }))
    expect(ids.sort(byId).map(({ id }) => id)).toEqual(['Zeta', 'a-b', 'a.b', 'acme', 'globex'])
  })
})

describe('destination ids', () => {
  it.each(['a', 'A9', '9', 'acme-eu.prod_2', 'a'.repeat(100)])('takes %j', (id) => {
    expect(whyNotDestinationId(id)).toBeUndefined()
  })

  it.each([
    ['', 'empty'],
    ['-a', 'starting with a dash'],
    ['.a', 'starting with a dot'],
    ['a/b', 'with a slash, which a job id uses'],
    ['a:b', 'with a colon, which BullMQ job ids may not have'],
    ['a b', 'with a space'],
    ['ab/', 'ending with a slash'],
    ['a\u00e9', 'with a letter outside ASCII'],
    ['a'.repeat(101), 'longer than 100'],
  ])('refuses %j (%s), naming what it takes', (id) => {
    expect(whyNotDestinationId(id)).toBe(
      `expected 1 to 100 letters, digits, "_", "-" or ".", starting with a letter or digit, got ${JSON.stringify(id)}`,
    )
  })

  it('quotes at most 120 characters of an id it refuses', () => {
    expect(whyNotDestinationId(`${'a'.repeat(120)}/${'b'.repeat(1_000)}`)).toMatch(/got "a{120}"$/)
  })

  it('refuses what is not a string, naming its type', () => {
    expect(whyNotDestinationId(42)).toBe('expected a string, got number')
    expect(whyNotDestinationId(undefined)).toBe('expected a string, got undefined')
  })
})

describe('resolveDestination', () => {
  it('fills in the defaults, and stores the settings as given without the fields left out', () => {
    const { resolved, record } = resolveDestination({ id: 'acme', webhooks: [{ url }] })
    expect(record).toEqual({ id: 'acme', webhooks: [{ url }], mode: 'any', enabled: true })
    expect(Object.keys(record)).toEqual(['id', 'webhooks', 'mode', 'enabled'])
    expect(Object.keys(record.webhooks[0] ?? {})).toEqual(['url'])
    expect(resolved).toMatchObject({ id: 'acme', enabled: true, mode: 'any', sharedSecrets: [], standardKeys: [] })
    expect(resolved.webhooks).toEqual([
      {
        url,
        origin: 'https://hooks.acme.example',
        path: '/in',
        headers: { 'content-type': 'application/json', 'user-agent': 'eventwire-webhooks/1.0' },
      },
    ])
  })

  it('keeps every field given, secrets as given, and resolves them', () => {
    const given = {
      id: 'acme',
      webhooks: [{ url, headers: { 'X-Team': 'data' } }, { url: 'https://b.example/' }],
      sharedSecret: ['new', 'old'],
      standardSecret: secret,
      mode: 'each' as const,
      enabled: false,
    }
    const { resolved, record } = resolveDestination(given)
    expect(record).toEqual(given)
    expect(resolved.sharedSecrets).toEqual(['new', 'old'])
    expect(resolved.standardKeys).toHaveLength(1)
    expect(resolved.standardKeys[0]).toEqual(new Uint8Array(24).fill(7))
    expect(resolved.mode).toBe('each')
    expect(resolved.enabled).toBe(false)
    expect(resolved.webhooks[0]?.headers['x-team']).toBe('data')
  })

  it.each([
    [
      'a string',
      'acme',
      'destination',
      /expected an object \{ id, webhooks, sharedSecret\?, \.\.\. \}, got a string \("acme"\)\. Give it as \{ id: 'acme', webhooks: \[\{ url: 'https:\/\/…' \}\] \}\.$/,
    ],
    ['null', null, 'destination', /expected an object \{ id, webhooks.*, got null\./],
    ['an array', [], 'destination', /, got an array\./],
    ['a number', 42, 'destination', /, got a number\./],
    [
      'an unknown field',
      { id: 'a', webhooks: [{ url }], colour: 'red' },
      'destination.colour',
      /the options are id, webhooks, sharedSecret, standardSecret, mode, enabled/,
    ],
    ['urls', { id: 'a', urls: [url] }, 'destination.urls', /use `webhooks` instead/],
    ['secret', { id: 'a', webhooks: [{ url }], secret: 's' }, 'destination.secret', /use `sharedSecret` instead/],
    ['disabled', { id: 'a', webhooks: [{ url }], disabled: true }, 'destination.disabled', /use `enabled` instead/],
    ['no id', { webhooks: [{ url }] }, 'destination.id', /expected a string, got undefined\.$/],
    ['no webhooks', { id: 'a' }, 'destination.webhooks', /expected 1 to 5 entries, got undefined/],
    ['no URL', { id: 'a', webhooks: [] }, 'destination.webhooks', /expected 1 to 5 entries, got 0/],
    [
      'a URL without a scheme',
      { id: 'a', webhooks: [{ url: 'hooks.example/in' }] },
      'destination.webhooks[0].url',
      /full http:\/\/ or https:\/\/ URL/,
    ],
    [
      'a second entry that is not one',
      { id: 'a', webhooks: [{ url }, 'x'] },
      'destination.webhooks[1]',
      /expected \{ url, headers\? \}/,
    ],
    [
      'an empty shared secret',
      { id: 'a', webhooks: [{ url }], sharedSecret: '' },
      'destination.sharedSecret',
      /non-empty string/,
    ],
    [
      'a list with an empty shared secret',
      { id: 'a', webhooks: [{ url }], sharedSecret: ['s', ''] },
      'destination.sharedSecret[1]',
      /non-empty string/,
    ],
    [
      'a Standard Webhooks secret without its prefix',
      { id: 'a', webhooks: [{ url }], standardSecret: 'abc' },
      'destination.standardSecret',
      /whsec_/,
    ],
    ['another mode', { id: 'a', webhooks: [{ url }], mode: 'all' }, 'destination.mode', /'any'.*'each'|any.*each/],
    [
      'enabled as a string',
      { id: 'a', webhooks: [{ url }], enabled: 'yes' },
      'destination.enabled',
      /expected true or false\.$/,
    ],
  ])('refuses %s, naming the field and the fix', (_, value, option, message) => {
    const refused = refusal(value)
    expect(refused.option).toBe(option)
    expect(refused.message).toMatch(message)
  })

  it('reads a stored destination that lists a URL twice (written before the rule), and refuses one to be written', () => {
    const twice = { id: 'acme', webhooks: [{ url: 'https://a.example/in' }, { url: 'https://a.example/in' }] }
    expect(resolveDestination(twice, 'destinations.acme.').resolved.webhooks).toHaveLength(2)
    expect(() => resolveNewDestination(twice)).toThrow(/`destination\.webhooks\[1\]\.url`: .* already/)
  })

  it('names the fields under the prefix it is given', () => {
    expect(refusal({ id: 'a', webhooks: [] }, 'destinations.a.').option).toBe('destinations.a.webhooks')
    expect(refusal('x', 'destinations.a.').option).toBe('destinations.a')
  })
})
