// The config of `eventwire serve`, checked whole before anything is written: each error names the
// field and what to give, and never the write key it found wrong.
import { describe, expect, it } from 'vitest'
import { OptionsError } from '../../src/index.js'
import { checkServeConfig as checkWith } from '../../src/cli/serve/serve-config.js'
import { answerOf } from '../../src/cli/serve/serve-server.js'
import {
  MAX_RATE_LIMIT,
  MAX_SOURCE_DESTINATIONS,
  MAX_WRITE_KEY_LENGTH,
  MAX_WRITE_KEYS,
} from '../../src/webhook/bullmq/source-record.js'
import { WebhookSources } from '../../src/webhook/bullmq/webhook-sources.js'

/** The file checked as serve checks it: each source by the registry's own rules. */
const checkServeConfig = (config: unknown) => checkWith(config, WebhookSources.check)

const source = (over: Record<string, unknown> = {}) => ({
  id: 'shop',
  writeKey: 'wk_1',
  destinations: ['acme'],
  ...over,
})
const refusal = (config: unknown) => {
  try {
    checkServeConfig(config)
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError)
    return (error as Error).message
  }
  throw new Error('accepted')
}

describe('the config of eventwire serve', () => {
  it('takes sources with one write key or a rotation, and destinations as the registry takes them', () => {
    const config = checkServeConfig({
      sources: [source(), source({ id: 'blog', writeKey: ['wk_a', 'wk_b'], destinations: [] })],
      destinations: [{ id: 'acme', webhooks: [{ url: 'https://a.example/in' }], sharedSecret: 's' }],
    })
    expect(config.sources).toEqual([
      { id: 'shop', writeKey: 'wk_1', destinations: ['acme'] },
      { id: 'blog', writeKey: ['wk_a', 'wk_b'], destinations: [] },
    ])
    expect(config.destinations).toEqual([
      { id: 'acme', webhooks: [{ url: 'https://a.example/in' }], sharedSecret: 's' },
    ])
    expect(checkServeConfig({ sources: [source()] }).destinations).toEqual([])
    expect(MAX_WRITE_KEYS).toBe(5)
    expect(MAX_WRITE_KEY_LENGTH).toBe(200)
    expect(MAX_SOURCE_DESTINATIONS).toBe(100)
  })

  it('names the field at fault and what to give', () => {
    expect(refusal([])).toBe(
      'Invalid option `config`: expected a JSON object { "sources": [...], "destinations": [...] }.',
    )
    expect(refusal({ sources: [source()], source: 1 })).toBe(
      'Invalid option `config.source`: no such field; use `sources` instead.',
    )
    expect(refusal({ sources: 'shop' })).toMatch(/^Invalid option `sources`: expected a list of sources, such as \[/)
    expect(refusal({})).toMatch(/^Invalid option `sources`: the file sets nothing: give sources, such as \[/)
    expect(refusal({ sources: [] })).toMatch(/^Invalid option `sources`: the file sets nothing/)
    expect(
      checkServeConfig({ destinations: [{ id: 'acme', webhooks: [{ url: 'https://a.example/in' }] }] }).sources,
    ).toEqual([])
    expect(refusal({ sources: ['shop'] })).toMatch(
      /^Invalid option `sources\[0\]`: expected an object \{ id, writeKey, destinations \}/,
    )
    expect(refusal({ sources: [source({ writeKeys: ['k'] })] })).toBe(
      'Invalid option `sources[0].writeKeys`: no such field; use `writeKey` instead.',
    )
    expect(refusal({ sources: [source({ id: 'a b' })] })).toMatch(
      /^Invalid option `sources\[0\]\.id`: expected 1 to 100/,
    )
    expect(refusal({ sources: [source({ writeKey: undefined })] })).toBe(
      'Invalid option `sources[0].writeKey`: a source needs a write key: the key its clients send with each call.',
    )
    expect(refusal({ sources: [source({ writeKey: '' })] })).toMatch(/`sources\[0\]\.writeKey`: expected a write key/)
    expect(refusal({ sources: [source({ writeKey: ' ' })] })).toMatch(/`sources\[0\]\.writeKey`: expected a write key/)
    expect(refusal({ sources: [source({ writeKey: 'k'.repeat(201) })] })).toMatch(/1 to 200 characters/)
    expect(checkServeConfig({ sources: [source({ writeKey: 'k'.repeat(200) })] }).sources[0]?.writeKey).toHaveLength(
      200,
    )
    expect(refusal({ sources: [source({ writeKey: [] })] })).toMatch(
      /`sources\[0\]\.writeKey`: expected one write key, or a list of 1 to 5/,
    )
    expect(refusal({ sources: [source({ writeKey: ['a', 'b', 'c', 'd', 'e', 'f'] })] })).toMatch(/a list of 1 to 5/)
    expect(
      checkServeConfig({ sources: [source({ writeKey: ['a', 'b', 'c', 'd', 'e'] })] }).sources[0]?.writeKey,
    ).toHaveLength(5)
    expect(refusal({ sources: [source({ key: 'k' })] })).toBe(
      'Invalid option `sources[0].key`: no such field; use `writeKey` instead.',
    )
    expect(refusal({ sources: [source({ destination: 'acme' })] })).toBe(
      'Invalid option `sources[0].destination`: no such field; use `destinations` instead.',
    )
    expect(refusal({ sources: [source()], destination: [] })).toBe(
      'Invalid option `config.destination`: no such field; use `destinations` instead.',
    )
    expect(refusal({ sources: [source({ writeKey: ['a', 7] })] })).toMatch(
      /^Invalid option `sources\[0\]\.writeKey\[1\]`/,
    )
    for (const key of ['wk:1', 'wk 1', 'wk\u00a01', 'wk\u00071', 'wk\u200b1', 'wk\u007f'])
      expect(refusal({ sources: [source({ writeKey: key })] }), JSON.stringify(key)).toMatch(
        /no space, no ":" and no control or invisible character/,
      )
    expect(checkServeConfig({ sources: [source({ writeKey: 'wk_é_🔑' })] }).sources).toHaveLength(1)
    expect(refusal({ sources: [source({ destinations: 'acme' })] })).toMatch(
      /^Invalid option `sources\[0\]\.destinations`: expected a list of up to 100 destination ids/,
    )
    expect(refusal({ sources: [source({ destinations: Array.from({ length: 101 }, (_, i) => `d${i}`) })] })).toMatch(
      /up to 100/,
    )
    expect(
      checkServeConfig({ sources: [source({ destinations: Array.from({ length: 100 }, (_, i) => `d${i}`) })] }),
    ).toBeDefined()
    expect(refusal({ sources: [source({ destinations: ['acme', ''] })] })).toBe(
      'Invalid option `sources[0].destinations[1]`: not the id of a destination: expected 1 to 100 letters, digits, "_", "-" or ".", starting with a letter or digit, got "".',
    )
    expect(refusal({ sources: [source({ destinations: [7] })] })).toMatch(/`sources\[0\]\.destinations\[0\]`/)
    expect(refusal({ sources: [source()], nope: 1 })).toBe(
      'Invalid option `config.nope`: no such field; the fields are sources, destinations.',
    )
    // Sources given by their keys' digests alone: none of them is another's key.
    const digests = (n: number) => [`sha256:${String(n).repeat(64)}`]
    expect(
      checkServeConfig({
        sources: [
          { id: 'a', writeKeyDigests: digests(1), destinations: [] },
          { id: 'b', writeKeyDigests: digests(2), destinations: [] },
        ],
      }).sources,
    ).toHaveLength(2)
    expect(refusal({ sources: [source({ nope: 1 })] })).toBe(
      'Invalid option `sources[0].nope`: no such field; the fields are id, writeKey, writeKeyDigests, destinations, rateLimit.',
    )
    expect(refusal({ sources: [source({ destinations: ['acme', 'acme'] })] })).toBe(
      'Invalid option `sources[0].destinations`: names a destination twice: each event would go to it twice.',
    )
    expect(refusal({ sources: [source(), source()] })).toMatch(
      /^Invalid option `sources\[1\]\.id`: another source is "shop" too/,
    )
    expect(refusal({ sources: [source(), source({ id: 'blog', writeKey: ['x', 'wk_1'] })] })).toBe(
      'Invalid option `sources[1].writeKey`: another source has this write key too: give each source its own.',
    )
    expect(refusal({ sources: [source()], destinations: {} })).toMatch(
      /^Invalid option `destinations`: expected a list/,
    )
    expect(refusal({ sources: [source()], destinations: [{ id: 'acme', webhooks: [{ url: 'ftp://x' }] }] })).toMatch(
      /^Invalid option `destinations\[0\]\.webhooks\[0\]\.url`/,
    )
    expect(
      refusal({
        sources: [source()],
        destinations: [
          { id: 'acme', webhooks: [{ url: 'https://a.example/' }] },
          { id: 'acme', webhooks: [{ url: 'https://b.example/' }] },
        ],
      }),
    ).toMatch(/^Invalid option `destinations\[1\]\.id`: another destination is "acme" too/)
  })

  it("takes a source's own rate limit: a whole number of requests a second, 0 for none", () => {
    for (const rateLimit of [0, 1, 250, MAX_RATE_LIMIT])
      expect(checkServeConfig({ sources: [source({ rateLimit })] }).sources[0]).toEqual({
        id: 'shop',
        writeKey: 'wk_1',
        destinations: ['acme'],
        rateLimit,
      })
    expect(MAX_RATE_LIMIT).toBe(1_000_000)
    for (const rateLimit of [-1, 1.5, '100', MAX_RATE_LIMIT + 1, null, Number.NaN])
      expect(refusal({ sources: [source({ rateLimit })] }), String(rateLimit)).toBe(
        'Invalid option `sources[0].rateLimit`: expected the requests a second this source may send to one process: a whole number from 1 to 1000000, or 0 for no limit.',
      )
    expect(refusal({ sources: [source({ rate: 5 })] })).toBe(
      'Invalid option `sources[0].rate`: no such field; use `rateLimit` instead.',
    )
  })

  it('never says the write key it found wrong', () => {
    const secret = 'wk_live_do_not_print'
    for (const config of [
      { sources: [source({ writeKey: `${secret}:x` })] },
      { sources: [source({ writeKey: secret }), source({ id: 'b', writeKey: secret })] },
    ])
      expect(refusal(config)).not.toContain(secret)
  })

  it('answers a store that failed: 503 while Redis cannot take events, 400 for a rule, 500 otherwise', () => {
    for (const code of [
      'ERR_TIMEOUT',
      'ERR_REDIS_REFUSED',
      'ERR_REDIS_FAULT',
      'ERR_NOT_REPLICATED',
      'ERR_CLOSED',
      'ERR_INVALID_OPTION',
    ]) {
      const answer = answerOf(Object.assign(new Error('Redis said no.'), { code }))
      expect(answer, code).toMatchObject({ status: 503, code: 'ERR_UNAVAILABLE', retryAfterS: 1 })
      expect(answer.message, code).toBe(
        code === 'ERR_TIMEOUT'
          ? 'the events were not stored: Redis did not answer in time. Send the request again.'
          : 'the events were not stored: Redis said no. Send the request again.',
      )
    }
    expect(answerOf(Object.assign(new Error('bad'), { code: 'ERR_INVALID_FIELD', field: 'userId' }))).toMatchObject({
      status: 400,
      code: 'ERR_BAD_BATCH',
      message: 'bad',
    })
    expect(answerOf(Object.assign(new Error('odd'), { code: 'ERR_INVALID_FIELD' }))).toMatchObject({ status: 500 })
    expect(answerOf(Object.assign(new Error('odd'), { code: 'EINVAL', field: 'x' }))).toMatchObject({ status: 500 })
    expect(answerOf(Object.assign(new Error('odd'), { code: 7, field: 'x' }))).toMatchObject({ status: 500 })
    expect(answerOf(new Error('boom'))).toMatchObject({
      status: 500,
      code: 'ERR_INTERNAL',
      message: 'the events were not stored: boom',
    })
    expect(answerOf('text')).toMatchObject({ status: 500, message: 'the events were not stored: text' })
  })
})
