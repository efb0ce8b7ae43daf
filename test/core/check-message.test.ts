import { describe, expect, it } from 'vitest'
import {
  checkMessage,
  Client,
  MAX_MESSAGE_BYTES,
  MESSAGE_TYPES,
  MessageTooLargeError,
  ValidationError,
  type MessageType,
} from '../../src/index.js'

/** The message a real `Client` sends for the same call: the batch's only item, parsed. */
async function sentByClient(type: MessageType, input: unknown): Promise<unknown> {
  let body = ''
  const fetch: typeof globalThis.fetch = async (request) => {
    body = await (request as Request).text()
    return new Response('{}', { status: 200 })
  }
  const client = new Client('key', { endpoint: 'http://127.0.0.1:9', flushAt: 1, fetch })
  ;(client[type] as (input: unknown) => boolean).call(client, input)
  await client.close()
  return (JSON.parse(body) as { batch: unknown[] }).batch[0]
}

/** What a call throws, as plain data: class, code, field and message. */
function thrown(action: () => unknown): unknown {
  try {
    action()
  } catch (error) {
    const { name, code, field, message } = error as ValidationError
    return { name, code, field, message }
  }
  throw new Error('expected a throw')
}

const fixed = { messageId: 'm-1', timestamp: '2024-05-06T10:00:00.000Z' }

describe('checkMessage', () => {
  const valid: Array<[MessageType, Record<string, unknown>]> = [
    ['identify', { userId: 'u1', traits: { plan: 'pro', seats: 3 }, context: { ip: '1.2.3.4' } }],
    [
      'track',
      { userId: 'u1', event: 'Paid', properties: { total: 42, at: new Date(0) }, integrations: { All: false } },
    ],
    ['page', { anonymousId: 'a1', name: 'Home', category: 'Docs', properties: { path: '/' } }],
    ['screen', { userId: 'u1', name: 'Settings', category: '' }],
    ['group', { userId: 'u1', groupId: 'g1', traits: {} }],
    ['alias', { userId: 'u1', previousId: 'anon-1', extra: 'dropped' }],
  ]

  it.each(valid)('returns the %s message the client sends for the same input', async (type, input) => {
    const message = checkMessage(type, { ...input, ...fixed })
    expect(message).toEqual(await sentByClient(type, { ...input, ...fixed }))
    expect(message).toMatchObject({ type, ...fixed })
  })

  it('fills in messageId and timestamp as the client does', () => {
    const message = checkMessage('track', { userId: 'u1', event: 'E' })
    expect(message.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Date(message.timestamp).toISOString()).toBe(message.timestamp)
  })

  it('returns a snapshot: changing the input afterwards changes nothing in it', () => {
    const properties: Record<string, unknown> = { plan: 'pro' }
    const message = checkMessage('track', { userId: 'u1', event: 'E', properties })
    properties['plan'] = 'free'
    expect(message['properties']).toEqual({ plan: 'pro' })
  })

  const invalid: Array<[string, MessageType, unknown]> = [
    ['track without event', 'track', { userId: 'u1' }],
    ['a call without any id', 'identify', { traits: { plan: 'pro' } }],
    ['group without groupId', 'group', { userId: 'u1' }],
    ['alias without previousId', 'alias', { userId: 'u1' }],
    ['a message that is not an object', 'page', 'home'],
    ['a numeric userId', 'track', { userId: 42, event: 'E' }],
    ['a timestamp without a zone', 'track', { userId: 'u1', event: 'E', timestamp: '2024-05-06T10:00:00' }],
    ['a messageId with a line break', 'track', { userId: 'u1', event: 'E', messageId: 'a\nb' }],
    ['a BigInt in properties', 'track', { userId: 'u1', event: 'E', properties: { n: 1n } }],
    ['a Map in traits', 'identify', { userId: 'u1', traits: { m: new Map() } }],
  ]

  it.each(invalid)('refuses %s with the ValidationError the client throws', (_name, type, input) => {
    const client = new Client('key', { endpoint: 'http://127.0.0.1:9' })
    const fromClient = thrown(() => (client[type] as (input: unknown) => boolean).call(client, input))
    expect(fromClient).toMatchObject({ name: 'ValidationError' })
    expect(thrown(() => checkMessage(type, input))).toEqual(fromClient)
    expect(() => checkMessage(type, input)).toThrow(ValidationError)
  })

  it('refuses a message over MAX_MESSAGE_BYTES of JSON with MessageTooLargeError, as the client does', () => {
    const input = { userId: 'u1', event: 'E', properties: { text: 'é'.repeat(MAX_MESSAGE_BYTES / 2) } }
    const client = new Client('key', { endpoint: 'http://127.0.0.1:9' })
    const fromClient = thrown(() => client.track(input))
    expect(fromClient).toMatchObject({ name: 'MessageTooLargeError', code: 'ERR_MESSAGE_TOO_LARGE' })
    expect(thrown(() => checkMessage('track', input))).toEqual(fromClient)
    expect(() => checkMessage('track', input)).toThrow(MessageTooLargeError)
  })

  it.each<[string, unknown]>([
    ['an unknown type name', 'purchase'],
    ['a type in another case', 'Track'],
    ['no type', undefined],
    ['a number', 1],
    ['a symbol', Symbol('track')],
  ])('refuses %s as the type, naming the types it takes', (_name, type) => {
    expect(thrown(() => checkMessage(type as MessageType, { userId: 'u1', event: 'E' }))).toEqual({
      name: 'ValidationError',
      code: 'ERR_INVALID_FIELD',
      field: 'type',
      message: expect.stringContaining(`\`type\` must be one of ${MESSAGE_TYPES.join(', ')}; got `),
    })
  })

  it('lists every call type of the client in MESSAGE_TYPES', () => {
    expect(MESSAGE_TYPES).toEqual(['identify', 'track', 'page', 'screen', 'group', 'alias'])
    for (const type of MESSAGE_TYPES) expect(typeof Client.prototype[type]).toBe('function')
  })
})
