// A worker's staged alert as serve logs it: the destination, the URL's origin only (a webhook URL's
// path or query often holds a token), the error's code and its message with the URL cut the same way.
import { describe, expect, it } from 'vitest'
import { alertEntry } from '../../src/cli/serve/alert-entry.js'
import { WebhookError } from '../../src/webhook/index.js'

const URL_WITH_TOKEN = 'https://hooks.acme.example:8443/in/tok_5ecret?sig=abc'

describe('alertEntry', () => {
  it('logs a failing URL by its origin, the failure by its code and a message without the path', () => {
    const error = new WebhookError('ERR_HTTP_STATUS', URL_WITH_TOKEN, `${URL_WITH_TOKEN} answered HTTP 503.`)
    const entry = alertEntry({
      kind: 'failing',
      destination: 'acme',
      url: URL_WITH_TOKEN,
      share: 0.5,
      failingForMs: 7_200_000,
      error,
    })
    expect(entry).toEqual({
      level: 'warn',
      event: 'alert',
      kind: 'failing',
      destination: 'acme',
      url: 'https://hooks.acme.example:8443',
      share: 0.5,
      failingForMs: 7_200_000,
      error: 'ERR_HTTP_STATUS',
      reason: 'https://hooks.acme.example:8443 answered HTTP 503.',
    })
    expect(JSON.stringify(entry)).not.toContain('tok_5ecret')
  })

  it('logs a give-up and a disabled destination as warnings, a URL back as info, and no password', () => {
    const secretUrl = 'https://user:pa55@hooks.beta.example/x'
    const error = new WebhookError(
      'ERR_NETWORK',
      secretUrl,
      'Could not reach https://user:pa55@other.example/ (ECONNREFUSED).',
    )
    expect(alertEntry({ kind: 'given-up', url: secretUrl, failingForMs: 1, error })).toMatchObject({
      level: 'warn',
      kind: 'given-up',
      url: 'https://hooks.beta.example',
      error: 'ERR_NETWORK',
    })
    expect(JSON.stringify(alertEntry({ kind: 'given-up', url: secretUrl, failingForMs: 1, error }))).not.toContain(
      'pa55',
    )
    expect(alertEntry({ kind: 'back', destination: 'acme', url: URL_WITH_TOKEN })).toEqual({
      level: 'info',
      event: 'alert',
      kind: 'back',
      destination: 'acme',
      url: 'https://hooks.acme.example:8443',
    })
    expect(alertEntry({ kind: 'disabled', destination: 'acme' })).toEqual({
      level: 'warn',
      event: 'alert',
      kind: 'disabled',
      destination: 'acme',
    })
    expect(alertEntry({ kind: 'back', url: 'not a url' })).toMatchObject({ url: '(not a URL)' })
  })
})
