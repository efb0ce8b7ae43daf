import { describe, expect, it } from 'vitest'
import { OptionsError, WebhookDestination, type WebhookSettings } from '../../src/webhook/index.js'
import { resolveWebhookSettings } from '../../src/webhook/settings.js'

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

describe('WebhookDestination settings', () => {
  it('accepts 1 to 5 http(s) URLs with static headers and a secret', () => {
    expect(optionOf({ webhooks: [{ url }] })).toBeUndefined()
    expect(optionOf({ webhooks: Array.from({ length: 5 }, (_, i) => ({ url: `http://127.0.0.1:${8000 + i}/x?y=${i}`, headers: { 'X-Team': 'data' } })), sharedSecret: 's' })).toBeUndefined()
  })

  it('treats a setting set to undefined as left out', () => {
    const unset = {
      webhooks: [{ url, headers: undefined }],
      sharedSecret: undefined,
      timeoutMs: undefined,
      retryWindowMs: undefined,
      backoff: undefined,
      mode: undefined,
      maxConcurrency: undefined,
      maxConcurrencyPerUrl: undefined,
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
    ['CR/LF injection in a value', { webhooks: [{ url, headers: { 'X-Team': 'a\r\nX-Evil: 1' } }] }, 'webhooks[0].headers'],
    ['a LF in a value', { webhooks: [{ url }, { url, headers: { 'X-Team': 'a\nb' } }] }, 'webhooks[1].headers'],
    ['a non-string value', { webhooks: [{ url, headers: { 'X-Count': 3 } }] }, 'webhooks[0].headers'],
    ['an X-Signature header', { webhooks: [{ url, headers: { 'X-Signature': 'forged' } }] }, 'webhooks[0].headers'],
    ['a Webhook-Id header', { webhooks: [{ url, headers: { 'Webhook-Id': 'fixed' } }] }, 'webhooks[0].headers'],
    ['a Content-Type header', { webhooks: [{ url, headers: { 'content-type': 'text/plain' } }] }, 'webhooks[0].headers'],
    ['an empty secret', { webhooks: [{ url }], sharedSecret: '' }, 'sharedSecret'],
    ['a numeric secret', { webhooks: [{ url }], sharedSecret: 123 }, 'sharedSecret'],
    ['a zero timeout', { webhooks: [{ url }], timeoutMs: 0 }, 'timeoutMs'],
    ['a negative window', { webhooks: [{ url }], retryWindowMs: -1 }, 'retryWindowMs'],
    ['an unknown mode', { webhooks: [{ url }], mode: 'all' }, 'mode'],
    ['a non-function backoff', { webhooks: [{ url }], backoff: 5 }, 'backoff'],
    ['a transport without send', { webhooks: [{ url }], transport: {} }, 'transport'],
  ])('rejects %s at construction', (_name, settings, option) => {
    expect(optionOf(settings)).toBe(option)
  })
})
