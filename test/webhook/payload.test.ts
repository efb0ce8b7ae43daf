import { describe, expect, it } from 'vitest'
import { isEnabledFor } from '../../src/webhook/event/integrations.js'
import { toWebhookPayload, ValidationError, type WebhookEvent } from '../../src/webhook/index.js'
import { thrownBy } from '../helpers/thrown.js'

const timestamp = '2024-05-06T07:08:09.010Z'
const mobileContext = {
  device: { model: 'x', type: 'ios' },
  os: { name: 'iOS', version: '17' },
  app: { build: '1', name: 'A', version: '2' },
}
const context = { ip: '203.0.113.9' }

describe('toWebhookPayload: the body every webhook request carries', () => {
  it.each<[string, WebhookEvent, Record<string, unknown>]>([
    [
      'page',
      {
        type: 'page',
        userId: 'u1',
        timestamp,
        context,
        name: 'Home',
        properties: { path: '/', referrer: 'https://r.test/', title: 'Home', url: 'https://x.test/', custom: 1 },
      },
      {
        version: 1,
        type: 'page',
        userId: 'u1',
        timestamp,
        context,
        properties: { path: '/', referrer: 'https://r.test/', title: 'Home', url: 'https://x.test/', custom: 1 },
      },
    ],
    [
      'screen',
      {
        type: 'screen',
        userId: 'u1',
        timestamp,
        name: 'Main',
        context: mobileContext,
      },
      {
        version: 1,
        type: 'screen',
        userId: 'u1',
        timestamp,
        name: 'Main',
        context: mobileContext,
      },
    ],
    [
      'identify',
      { type: 'identify', userId: 'u1', timestamp, context, traits: { name: 'Ada', age: 36 } },
      { version: 1, type: 'identify', userId: 'u1', timestamp, context, traits: { name: 'Ada', age: 36 } },
    ],
    [
      'track',
      { type: 'track', userId: 'u1', timestamp, context, event: 'Paid', properties: { amount: 5 } },
      { version: 1, type: 'track', userId: 'u1', timestamp, context, event: 'Paid', properties: { amount: 5 } },
    ],
    [
      'alias',
      { type: 'alias', userId: 'u1', previousId: 'anon-1', timestamp, context },
      { version: 1, type: 'alias', timestamp, context, 'Previous ID': 'anon-1', 'User ID': 'u1' },
    ],
    [
      'group',
      { type: 'group', userId: 'u1', groupId: 'g1', timestamp, context, traits: { size: 20 } },
      { version: 1, type: 'group', userId: 'u1', timestamp, context, groupId: 'g1', traits: { size: 20 } },
    ],
    ['delete', { type: 'delete', userId: 'u1', timestamp }, { type: 'delete', userId: 'u1', timestamp }],
  ])('builds the %s body exactly', (_type, event, expected) => {
    expect(toWebhookPayload(event)).toStrictEqual(expected)
  })

  it('gives alias no userId field, delete no version and no context', () => {
    expect(toWebhookPayload({ type: 'alias', userId: 'u1', previousId: 'p' })).not.toHaveProperty('userId')
    const deletion = toWebhookPayload({ type: 'delete', userId: 'u1' })
    expect(Object.keys(deletion).sort()).toEqual(['timestamp', 'type', 'userId'])
  })

  it('writes every timestamp as ISO 8601 with milliseconds and Z, defaulting to now', () => {
    expect(
      toWebhookPayload({ type: 'track', userId: 'u', event: 'E', timestamp: '2015-07-10T23:00:00+02:00' }).timestamp,
    ).toBe('2015-07-10T21:00:00.000Z')
    expect(toWebhookPayload({ type: 'track', userId: 'u', event: 'E', timestamp: new Date(0) }).timestamp).toBe(
      '1970-01-01T00:00:00.000Z',
    )
    expect(toWebhookPayload({ type: 'identify', userId: 'u' }).timestamp).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    )
  })

  it('sends a screen without a name with no name field', () => {
    expect(toWebhookPayload({ type: 'screen', userId: 'u', timestamp })).toStrictEqual({
      version: 1,
      type: 'screen',
      userId: 'u',
      timestamp,
      context: {},
    })
  })

  it('refuses a value JSON cannot carry unchanged, naming its path', () => {
    expect(() => toWebhookPayload({ type: 'track', userId: 'u', event: 'E', properties: { n: Number.NaN } })).toThrow(
      expect.objectContaining({ field: 'properties.n' }),
    )
    expect(() => toWebhookPayload({ type: 'identify', userId: 'u', context: { f: () => 1 } as never })).toThrow(
      expect.objectContaining({ field: 'context.f' }),
    )
  })

  it('defaults context, traits and properties to empty objects', () => {
    expect(toWebhookPayload({ type: 'track', userId: 'u', event: 'E', timestamp })).toStrictEqual({
      version: 1,
      type: 'track',
      userId: 'u',
      timestamp,
      context: {},
      event: 'E',
      properties: {},
    })
  })

  it('treats a field set to undefined as left out', () => {
    const unset = {
      context: undefined,
      properties: undefined,
      messageId: undefined,
      integrations: undefined,
      anonymousId: undefined,
    }
    expect(toWebhookPayload({ type: 'track', userId: 'u', event: 'E', timestamp, ...unset })).toStrictEqual(
      toWebhookPayload({ type: 'track', userId: 'u', event: 'E', timestamp }),
    )
    expect(
      toWebhookPayload({ type: 'delete', userId: 'u', timestamp: undefined, messageId: undefined }).timestamp,
    ).toMatch(/Z$/)
  })

  it.each<[string, unknown, string, string]>([
    ['an unknown type', { type: 'login', userId: 'u' }, 'ERR_INVALID_FIELD', 'type'],
    ['no type', { userId: 'u' }, 'ERR_INVALID_FIELD', 'type'],
    ['a track without userId', { type: 'track', event: 'E' }, 'ERR_MISSING_USER_ID', 'userId'],
    ['a track without event', { type: 'track', userId: 'u' }, 'ERR_MISSING_EVENT', 'event'],
    ['a group without groupId', { type: 'group', userId: 'u' }, 'ERR_MISSING_GROUP_ID', 'groupId'],
    ['an alias without previousId', { type: 'alias', userId: 'u' }, 'ERR_MISSING_PREVIOUS_ID', 'previousId'],
    ['an alias without userId', { type: 'alias', previousId: 'p' }, 'ERR_MISSING_USER_ID', 'userId'],
    ['a delete without userId', { type: 'delete' }, 'ERR_MISSING_USER_ID', 'userId'],
    ['a bad timestamp', { type: 'identify', userId: 'u', timestamp: 'soon' }, 'ERR_INVALID_FIELD', 'timestamp'],
    ['array traits', { type: 'identify', userId: 'u', traits: [] }, 'ERR_INVALID_FIELD', 'traits'],
    ['a non-object', 'track', 'ERR_INVALID_FIELD', 'event'],
    ['null', null, 'ERR_INVALID_FIELD', 'event'],
    ['an empty userId (empty is missing)', { type: 'track', userId: '', event: 'E' }, 'ERR_MISSING_USER_ID', 'userId'],
    ['an empty event name', { type: 'track', userId: 'u', event: '' }, 'ERR_MISSING_EVENT', 'event'],
    ['an empty groupId', { type: 'group', userId: 'u', groupId: '' }, 'ERR_MISSING_GROUP_ID', 'groupId'],
    ['an empty previousId', { type: 'alias', userId: 'u', previousId: '' }, 'ERR_MISSING_PREVIOUS_ID', 'previousId'],
    ['a numeric userId', { type: 'identify', userId: 42 }, 'ERR_INVALID_FIELD', 'userId'],
    ['a numeric event name', { type: 'track', userId: 'u', event: 7 }, 'ERR_INVALID_FIELD', 'event'],
    ['a screen name that is not a string', { type: 'screen', userId: 'u', name: 3 }, 'ERR_INVALID_FIELD', 'name'],
    [
      'a number as timestamp (not read as epoch ms)',
      { type: 'identify', userId: 'u', timestamp: 0 },
      'ERR_INVALID_FIELD',
      'timestamp',
    ],
    [
      'an invalid Date',
      { type: 'identify', userId: 'u', timestamp: new Date(Number.NaN) },
      'ERR_INVALID_FIELD',
      'timestamp',
    ],
    [
      'a context that is not an object',
      { type: 'identify', userId: 'u', context: 'web' },
      'ERR_INVALID_FIELD',
      'context',
    ],
    [
      'an alias context that is not an object',
      { type: 'alias', userId: 'u', previousId: 'p', context: [] },
      'ERR_INVALID_FIELD',
      'context',
    ],
    [
      'page properties that are not an object',
      { type: 'page', userId: 'u', properties: 'x' },
      'ERR_INVALID_FIELD',
      'properties',
    ],
    [
      'track properties that are not an object',
      { type: 'track', userId: 'u', event: 'E', properties: 1 },
      'ERR_INVALID_FIELD',
      'properties',
    ],
    [
      'group traits that are not an object',
      { type: 'group', userId: 'u', groupId: 'g', traits: [] },
      'ERR_INVALID_FIELD',
      'traits',
    ],
  ])('rejects %s with a typed error naming the field', (_name, event, code, field) => {
    const thrown = thrownBy(() => {
      toWebhookPayload(event as WebhookEvent)
    })
    expect(thrown).toBeInstanceOf(ValidationError)
    expect(thrown).toMatchObject({ code, field })
  })
})

describe('integrations (destination name "Webhooks")', () => {
  it.each<[unknown, boolean]>([
    [undefined, true],
    [{}, true],
    [{ All: true }, true],
    [{ All: false }, false],
    [{ All: false, Webhooks: true }, true],
    [{ Webhooks: false }, false],
    [{ All: true, Webhooks: false }, false],
    [{ webhooks: false }, true],
  ])('%j -> enabled %s', (integrations, enabled) => {
    expect(isEnabledFor(integrations)).toBe(enabled)
  })
})
