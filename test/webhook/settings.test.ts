import { describe, expect, it } from 'vitest'
import { OptionsError, WebhookDestination, type WebhookSettings } from '../../src/webhook/index.js'
import { MAX_TIMER_MS } from '../../src/core/timers.js'
import { resolveWebhookSettings, USER_AGENT } from '../../src/webhook/delivery/settings.js'
import { thrownBy } from '../helpers/thrown.js'

function optionOf(settings: unknown): string | undefined {
  try {
    new WebhookDestination(settings as WebhookSettings)
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError)
    expect((error as OptionsError).code).toBe('ERR_INVALID_OPTION')
    return (error as OptionsError).option
  }
  return undefined
}

const url = 'https://hooks.example.com/in'
/** `target` with a `send` method: a transport only if it is an object. */
const withSend = <T extends object>(target: T) => Object.assign(target, { send: () => Promise.resolve({}) })

describe('WebhookDestination settings', () => {
  it('accepts 1 to 5 http(s) URLs with static headers and a secret', () => {
    expect(optionOf({ webhooks: [{ url }] })).toBeUndefined()
    expect(
      optionOf({
        webhooks: Array.from({ length: 5 }, (_, i) => ({
          url: `http://127.0.0.1:${8000 + i}/x?y=${i}`,
          headers: { 'X-Team': 'data' },
        })),
        sharedSecret: 's',
      }),
    ).toBeUndefined()
  })

  it('treats a setting set to undefined as left out', () => {
    const unset = {
      webhooks: [{ url, headers: undefined }],
      sharedSecret: undefined,
      standardSecret: undefined,
      timeoutMs: undefined,
      retryWindowMs: undefined,
      backoff: undefined,
      mode: undefined,
      maxConcurrency: undefined,
      maxConcurrencyPerUrl: undefined,
      maxPendingPerUrl: undefined,
      breaker: undefined,
      ratePerUrl: undefined,
      transport: undefined,
      blockPrivateNetworks: undefined,
    } satisfies Required<WebhookSettings>
    expect(resolveWebhookSettings(unset)).toEqual(resolveWebhookSettings({ webhooks: [{ url }] }))
    expect(optionOf(unset)).toBeUndefined()
  })

  it.each<[string, unknown, string]>([
    ['no settings', undefined, 'settings'],
    ['a setting it does not know (secret for sharedSecret)', { webhooks: [{ url }], secret: 's' }, 'secret'],
    ['an entry key it does not know', { webhooks: [{ url, header: { 'X-Team': 'a' } }] }, 'webhooks[0].header'],
    ['no webhooks', { webhooks: [] }, 'webhooks'],
    ['six webhooks', { webhooks: Array.from({ length: 6 }, () => ({ url })) }, 'webhooks'],
    ['a relative URL', { webhooks: [{ url: '/hooks' }] }, 'webhooks[0].url'],
    ['an ftp URL', { webhooks: [{ url: 'ftp://x.test/' }] }, 'webhooks[0].url'],
    ['a URL without protocol', { webhooks: [{ url: 'hooks.example.com/in' }] }, 'webhooks[0].url'],
    ['credentials in the URL', { webhooks: [{ url: 'https://user:pw@x.test/' }] }, 'webhooks[0].url'],
    ['a non-string URL', { webhooks: [{ url: 42 }] }, 'webhooks[0].url'],
    ['a header name with a space', { webhooks: [{ url, headers: { 'X Team': 'a' } }] }, 'webhooks[0].headers'],
    ['a header name with a colon', { webhooks: [{ url, headers: { 'X-Team:': 'a' } }] }, 'webhooks[0].headers'],
    [
      'CR/LF injection in a value',
      { webhooks: [{ url, headers: { 'X-Team': 'a\r\nX-Evil: 1' } }] },
      'webhooks[0].headers',
    ],
    ['a LF in a value', { webhooks: [{ url }, { url, headers: { 'X-Team': 'a\nb' } }] }, 'webhooks[1].headers'],
    ['a non-string value', { webhooks: [{ url, headers: { 'X-Count': 3 } }] }, 'webhooks[0].headers'],
    ['an X-Signature header', { webhooks: [{ url, headers: { 'X-Signature': 'forged' } }] }, 'webhooks[0].headers'],
    ['a Webhook-Id header', { webhooks: [{ url, headers: { 'Webhook-Id': 'fixed' } }] }, 'webhooks[0].headers'],
    [
      'a Content-Type header',
      { webhooks: [{ url, headers: { 'content-type': 'text/plain' } }] },
      'webhooks[0].headers',
    ],
    ['an empty secret', { webhooks: [{ url }], sharedSecret: '' }, 'sharedSecret'],
    ['a numeric secret', { webhooks: [{ url }], sharedSecret: 123 }, 'sharedSecret'],
    ['an empty list of secrets', { webhooks: [{ url }], sharedSecret: [] }, 'sharedSecret'],
    ['an empty secret in a rotation', { webhooks: [{ url }], sharedSecret: ['s', ''] }, 'sharedSecret[1]'],
    [
      'a Standard Webhooks secret without whsec_',
      { webhooks: [{ url }], standardSecret: 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
      'standardSecret',
    ],
    [
      'a Standard Webhooks secret that is not base64',
      { webhooks: [{ url }], standardSecret: 'whsec_not base64!' },
      'standardSecret',
    ],
    [
      'a Standard Webhooks key of 16 bytes',
      { webhooks: [{ url }], standardSecret: `whsec_${btoa('x'.repeat(16))}` },
      'standardSecret',
    ],
    [
      'a Standard Webhooks key of 65 bytes',
      { webhooks: [{ url }], standardSecret: `whsec_${btoa('x'.repeat(65))}` },
      'standardSecret',
    ],
    [
      'a bad second secret in a rotation',
      { webhooks: [{ url }], standardSecret: [`whsec_${btoa('x'.repeat(24))}`, 'whsec_'] },
      'standardSecret[1]',
    ],
    ['an empty list of Standard Webhooks secrets', { webhooks: [{ url }], standardSecret: [] }, 'standardSecret'],
    ['a zero timeout', { webhooks: [{ url }], timeoutMs: 0 }, 'timeoutMs'],
    ['a negative window', { webhooks: [{ url }], retryWindowMs: -1 }, 'retryWindowMs'],
    ['an unknown mode', { webhooks: [{ url }], mode: 'all' }, 'mode'],
    ['a non-function backoff', { webhooks: [{ url }], backoff: 5 }, 'backoff'],
    ['a transport without send', { webhooks: [{ url }], transport: {} }, 'transport'],
    ['a null transport', { webhooks: [{ url }], transport: null }, 'transport'],
    [
      'a function with a send method for a transport',
      { webhooks: [{ url }], transport: withSend(() => {}) },
      'transport',
    ],
  ])('rejects %s at construction', (_name, settings, option) => {
    expect(optionOf(settings)).toBe(option)
  })
})

describe('WebhookDestination setting names', () => {
  it.each([
    ['urls', 'webhooks'],
    ['secret', 'sharedSecret'],
    ['timeout', 'timeoutMs'],
    ['retryWindow', 'retryWindowMs'],
    ['concurrency', 'maxConcurrency'],
  ])('refuses %s, a name other clients use, pointing to ours (%s)', (theirs, ours) => {
    expect(optionOf({ webhooks: [{ url }], [theirs]: 1 })).toBe(theirs)
    expect(() => new WebhookDestination({ webhooks: [{ url }], [theirs]: 1 } as WebhookSettings)).toThrow(`\`${ours}\``)
  })
})

describe('WebhookDestination webhooks entries', () => {
  it('says so of a URL given as a string instead of { url }, without repeating it (it may hold a password)', () => {
    const secretUrl = 'https://user:pw@x.test/'
    expect(() => new WebhookDestination({ webhooks: [secretUrl] as never })).toThrow(
      'Invalid option `webhooks[0]`: expected { url, headers? }, got a string: give it as { url }.',
    )
    expect(() => new WebhookDestination({ webhooks: [42] as never })).toThrow(
      'Invalid option `webhooks[0]`: expected { url, headers? }.',
    )
  })
})

describe('WebhookDestination transport setting', () => {
  it('takes any object with a send method, and says what it expected of anything else', () => {
    expect(optionOf({ webhooks: [{ url }], transport: withSend({}) })).toBeUndefined()
    expect(() => new WebhookDestination({ webhooks: [{ url }], transport: 'undici' as never })).toThrow(
      'Invalid option `transport`: expected an object with send(request).',
    )
  })
})

describe('WebhookDestination defaults', () => {
  it('retries for four hours, waits 5 s per attempt, 256 requests at once, 64 per URL, mode any, unsigned, guard off', () => {
    expect(resolveWebhookSettings({ webhooks: [{ url }] })).toMatchObject({
      retryWindowMs: 4 * 60 * 60 * 1_000,
      timeoutMs: 5_000,
      maxConcurrency: 256,
      maxConcurrencyPerUrl: 64,
      mode: 'any',
      sharedSecrets: [],
      standardKeys: [],
      blockPrivateNetworks: false,
    })
  })

  it('waits 5 s before the first retry, doubling each time, within ±10% jitter', () => {
    const { backoff } = resolveWebhookSettings({ webhooks: [{ url }] })
    for (let attempt = 0; attempt <= 10; attempt++) {
      const base = 5_000 * 2 ** attempt
      const delays = Array.from({ length: 200 }, () => backoff(attempt))
      for (const delay of delays) {
        expect(delay).toBeGreaterThanOrEqual(base * 0.9)
        expect(delay).toBeLessThanOrEqual(base * 1.1)
      }
      // Jitter spreads retries: the delays are not all the same, and fall on both sides of the base.
      expect(Math.min(...delays)).toBeLessThan(base)
      expect(Math.max(...delays)).toBeGreaterThan(base)
    }
  })

  it('sends Content-Type application/json and the eventwire User-Agent, with static headers by their lowercase names', () => {
    const [webhook] = resolveWebhookSettings({
      webhooks: [{ url: `${url}?a=1`, headers: { 'X-Team': 'data' } }],
    }).webhooks
    expect(webhook).toEqual({
      url: `${url}?a=1`,
      origin: 'https://hooks.example.com',
      path: '/in?a=1',
      headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, 'x-team': 'data' },
    })
  })
})

describe('WebhookDestination header rules', () => {
  // Reserved: set by eventwire itself, or the request would break (framing, routing).
  it.each(['Content-Type', 'Content-Length', 'User-Agent', 'X-Signature', 'Webhook-Id', 'Host'])(
    '%s is set by eventwire and cannot be configured, in any case',
    (name) => {
      for (const spelled of [name, name.toLowerCase(), name.toUpperCase()]) {
        expect(optionOf({ webhooks: [{ url, headers: { [spelled]: 'x' } }] })).toBe('webhooks[0].headers')
      }
    },
  )

  it.each(['Connection', 'Keep-Alive', 'Proxy-Connection', 'TE', 'Trailer', 'Transfer-Encoding', 'Upgrade', 'Expect'])(
    '%s is a hop-by-hop or framing header and cannot be configured, in any case',
    (name) => {
      for (const spelled of [name, name.toLowerCase(), name.toUpperCase()]) {
        expect(optionOf({ webhooks: [{ url, headers: { [spelled]: 'x' } }] })).toBe('webhooks[0].headers')
      }
    },
  )

  it('takes any other token as a header name, and an empty value, tabs and obs-text as values', () => {
    const headers = { Authorization: 'Bearer t', "x-!#$%&'*+.^_`|~0": 'a\tb \u00ff', 'X-Empty': '' }
    expect(optionOf({ webhooks: [{ url, headers }] })).toBeUndefined()
  })

  it.each([
    ['a NUL', 'a\u0000b'],
    ['a DEL', 'a\u007fb'],
    ['a character above U+00FF', 'caf\u00e9 \u2615'],
  ])('refuses a header value with %s', (_name, value) => {
    expect(optionOf({ webhooks: [{ url, headers: { 'X-Team': value } }] })).toBe('webhooks[0].headers')
  })

  it.each([null, [], 'X-Team: a'])('refuses headers that are not an object of names to values (%j)', (headers) => {
    expect(optionOf({ webhooks: [{ url, headers }] })).toBe('webhooks[0].headers')
  })
})

describe('WebhookDestination URL rules', () => {
  it.each([
    ['a user name and password', 'https://user:pw@hooks.example.com/in'],
    ['a user name only', 'https://user@hooks.example.com/in'],
    ['a password only', 'https://:pw@hooks.example.com/in'],
  ])('refuses credentials in the URL (%s): they would not be sent', (_name, credentialed) => {
    expect(optionOf({ webhooks: [{ url }, { url: credentialed }] })).toBe('webhooks[1].url')
  })

  it.each([
    'ftp://user:s3cret-pw@hooks.example.com/x',
    'https://user:s3cret-pw@exa mple.com/in',
    'user:s3cret-pw@hooks.example.com/in',
  ])('quotes a URL it cannot use without its password (%s)', (raw) => {
    const error = thrownBy(() => new WebhookDestination({ webhooks: [{ url: raw }] }))
    expect(error).toMatchObject({ code: 'ERR_INVALID_OPTION', option: 'webhooks[0].url' })
    expect((error as Error).message).toContain('***@')
    expect((error as Error).message).not.toContain('s3cret-pw')
  })

  it('refuses a URL listed twice, as written or in another case of its scheme and host', () => {
    expect(() =>
      resolveWebhookSettings({
        webhooks: [{ url: 'https://a.example/in' }, { url: 'https://b.example/in' }, { url: 'HTTPS://A.example/in' }],
      }),
    ).toThrow(
      'Invalid option `webhooks[2].url`: https://a.example/in is webhooks[0].url already: each event would go to it twice. List each URL once.',
    )
    expect(() =>
      resolveWebhookSettings({ webhooks: [{ url: 'https://a.example/in' }, { url: 'https://a.example/in?x=1' }] }),
    ).not.toThrow()
  })

  it.each([null, 'https://hooks.example.com/in', 42])('refuses an entry that is not an object (%j)', (entry) => {
    expect(optionOf({ webhooks: [entry] })).toBe('webhooks[0]')
  })

  it.each(['https://hooks.example.com/in', { 0: { url } }])(
    'refuses webhooks that are not an array (%j)',
    (webhooks) => {
      expect(optionOf({ webhooks })).toBe('webhooks')
    },
  )
})

describe('WebhookDestination numeric and boolean settings', () => {
  it.each<[string, number, number]>([
    ['timeoutMs', 1, MAX_TIMER_MS],
    ['retryWindowMs', 0, Number.MAX_SAFE_INTEGER],
    ['maxConcurrency', 1, 100_000],
    ['maxConcurrencyPerUrl', 1, 100_000],
  ])('%s takes whole numbers from %i to %i, and names itself when refused', (option, min, max) => {
    expect(resolveWebhookSettings({ webhooks: [{ url }], [option]: min })).toMatchObject({ [option]: min })
    expect(resolveWebhookSettings({ webhooks: [{ url }], [option]: max })).toMatchObject({ [option]: max })
    for (const bad of [min - 1, max + 1, 1.5, '10', Number.NaN]) {
      expect(optionOf({ webhooks: [{ url }], [option]: bad })).toBe(option)
    }
  })

  it('opens the breaker, by default, on 10 failures that are half the attempts of the last 10 s, for 30 s', () => {
    expect(resolveWebhookSettings({ webhooks: [{ url }] }).breaker).toEqual({
      failures: 10,
      failureRate: 0.5,
      windowMs: 10_000,
      coolDownMs: 30_000,
    })
    expect(resolveWebhookSettings({ webhooks: [{ url }], breaker: { failures: 3 } }).breaker).toEqual({
      failures: 3,
      failureRate: 0.5,
      windowMs: 10_000,
      coolDownMs: 30_000,
    })
    expect(resolveWebhookSettings({ webhooks: [{ url }], breaker: false }).breaker).toBeUndefined()
  })

  it.each<[string, unknown]>([
    ['breaker.failures', 0],
    ['breaker.failures', 1.5],
    ['breaker.failureRate', 0],
    ['breaker.failureRate', 1.01],
    ['breaker.failureRate', Number.NaN],
    ['breaker.failureRate', '0.5'],
    ['breaker.windowMs', 9],
    ['breaker.windowMs', MAX_TIMER_MS + 1],
    ['breaker.coolDownMs', -1],
  ])('refuses %s of %s, naming it', (option, bad) => {
    const name = option.slice('breaker.'.length)
    expect(optionOf({ webhooks: [{ url }], breaker: { [name]: bad } })).toBe(option)
  })

  it('takes a failure rate of exactly 1, and a window of 10 ms, and refuses a breaker setting it does not know', () => {
    expect(
      resolveWebhookSettings({ webhooks: [{ url }], breaker: { failureRate: 1, windowMs: 10 } }).breaker,
    ).toMatchObject({
      failureRate: 1,
      windowMs: 10,
    })
    expect(optionOf({ webhooks: [{ url }], breaker: { threshold: 5 } })).toBe('breaker.threshold')
    expect(optionOf({ webhooks: [{ url }], breaker: 'on' })).toBe('breaker')
  })

  it('takes blockPrivateNetworks as true or false only', () => {
    expect(resolveWebhookSettings({ webhooks: [{ url }], blockPrivateNetworks: true }).blockPrivateNetworks).toBe(true)
    expect(optionOf({ webhooks: [{ url }], blockPrivateNetworks: 'yes' })).toBe('blockPrivateNetworks')
  })

  it('takes Standard Webhooks secrets of 24 to 64 bytes, one or a rotation, and keeps their keys in order', () => {
    const first = `whsec_${btoa('a'.repeat(24))}`
    const second = `whsec_${btoa('b'.repeat(64))}`
    expect(resolveWebhookSettings({ webhooks: [{ url }], standardSecret: first }).standardKeys).toEqual([
      new TextEncoder().encode('a'.repeat(24)),
    ])
    const keys = resolveWebhookSettings({ webhooks: [{ url }], standardSecret: [first, second] }).standardKeys
    expect(keys.map((key) => key.length)).toEqual([24, 64])
    expect(resolveWebhookSettings({ webhooks: [{ url }], sharedSecret: ['old', 'new'] }).sharedSecrets).toEqual([
      'old',
      'new',
    ])
  })

  it('says why a Standard Webhooks secret is refused', () => {
    const message = (standardSecret: unknown) => {
      try {
        resolveWebhookSettings({ webhooks: [{ url }], standardSecret })
      } catch (error) {
        return (error as Error).message
      }
      return undefined
    }
    expect(message('s3cret')).toMatch(/whsec_ followed by base64/)
    expect(message('whsec_***')).toMatch(/not base64/)
    expect(message(`whsec_${btoa('x'.repeat(16))}`)).toMatch(
      /its key is 16 bytes; Standard Webhooks keys are 24 to 64 bytes/,
    )
  })

  it('keeps the mode, the secret and the backoff it is given', () => {
    const backoff = () => 1
    expect(resolveWebhookSettings({ webhooks: [{ url }], mode: 'each', sharedSecret: 's', backoff })).toMatchObject({
      mode: 'each',
      sharedSecrets: ['s'],
      backoff,
    })
  })

  it('refuses a private target when blockPrivateNetworks is on, naming the entry, and allows it when off', () => {
    const webhooks = [{ url }, { url: 'http://10.0.0.1/in' }]
    expect(optionOf({ webhooks, blockPrivateNetworks: true })).toBe('webhooks[1].url')
    expect(optionOf({ webhooks })).toBeUndefined()
  })
})
