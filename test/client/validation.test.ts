import { describe, expect, it } from 'vitest'
import {
  Client,
  ClosedError,
  EventwireError,
  MAX_MESSAGE_BYTES,
  MessageTooLargeError,
  ValidationError,
  type ErrorCode,
} from '../../src/index.js'
import { thrownBy } from '../helpers/thrown.js'
import { isMessageId, MAX_MESSAGE_ID_LENGTH, toWireMessage } from '../../src/core/validate.js'

function newClient(): Client {
  // Nothing here is sent: every call is invalid or the client is closed before a flush.
  return new Client('key', { endpoint: 'http://127.0.0.1:9', flushAfter: 60_000 })
}

/** A proxy that throws on every use: what a revoked proxy does. */
function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

function codeOf(action: () => unknown): ErrorCode | undefined {
  const thrown = thrownBy(action)
  if (thrown === undefined || thrown instanceof EventwireError) return thrown?.code
  throw thrown
}

describe('call validation', () => {
  type Case = [name: string, call: (client: Client) => unknown, code: ErrorCode, field: string]
  /** A track call whose only fault is its messageId. */
  const badMessageId = (name: string, messageId: unknown): Case => [
    name,
    (c) => c.track({ userId: 'u1', event: 'E', messageId: messageId as string }),
    'ERR_INVALID_FIELD',
    'messageId',
  ]
  const cases: Case[] = [
    ['track without event', (c) => c.track({ userId: 'u1' } as never), 'ERR_MISSING_EVENT', 'event'],
    ['track with empty event', (c) => c.track({ userId: 'u1', event: '' }), 'ERR_MISSING_EVENT', 'event'],
    ['track without any id', (c) => c.track({ event: 'E' } as never), 'ERR_MISSING_IDENTITY', 'userId'],
    ['identify without any id', (c) => c.identify({ traits: {} } as never), 'ERR_MISSING_IDENTITY', 'userId'],
    ['page without any id', (c) => c.page({ name: 'Home' } as never), 'ERR_MISSING_IDENTITY', 'userId'],
    ['screen without any id', (c) => c.screen({ name: 'Home' } as never), 'ERR_MISSING_IDENTITY', 'userId'],
    ['group without groupId', (c) => c.group({ userId: 'u1' } as never), 'ERR_MISSING_GROUP_ID', 'groupId'],
    ['group without any id', (c) => c.group({ groupId: 'g1' } as never), 'ERR_MISSING_IDENTITY', 'userId'],
    ['alias without userId', (c) => c.alias({ previousId: 'a' } as never), 'ERR_MISSING_USER_ID', 'userId'],
    ['alias without previousId', (c) => c.alias({ userId: 'u1' } as never), 'ERR_MISSING_PREVIOUS_ID', 'previousId'],
    ['a non-object message', (c) => c.track('hello' as never), 'ERR_INVALID_FIELD', 'message'],
    ['a null message', (c) => c.track(null as never), 'ERR_INVALID_FIELD', 'message'],
    ['an array as the message', (c) => c.identify([] as never), 'ERR_INVALID_FIELD', 'message'],
    ['a numeric userId', (c) => c.track({ userId: 42, event: 'E' } as never), 'ERR_INVALID_FIELD', 'userId'],
    [
      'array properties',
      (c) => c.track({ userId: 'u1', event: 'E', properties: [] } as never),
      'ERR_INVALID_FIELD',
      'properties',
    ],
    [
      'an invalid Date',
      (c) => c.track({ userId: 'u1', event: 'E', timestamp: new Date('nope') }),
      'ERR_INVALID_FIELD',
      'timestamp',
    ],
    [
      'an unparseable timestamp',
      (c) => c.track({ userId: 'u1', event: 'E', timestamp: 'yesterday' }),
      'ERR_INVALID_FIELD',
      'timestamp',
    ],
    [
      'a Date as properties',
      (c) => c.track({ userId: 'u1', event: 'E', properties: new Date() as never }),
      'ERR_INVALID_FIELD',
      'properties',
    ],
    [
      'a toJSON that returns NaN',
      (c) => c.track({ userId: 'u1', event: 'E', properties: { a: { toJSON: () => Number.NaN } } }),
      'ERR_NOT_SERIALIZABLE',
      'properties.a',
    ],
    [
      'a toJSON that returns undefined',
      (c) => c.track({ userId: 'u1', event: 'E', properties: { a: { toJSON: () => undefined } } }),
      'ERR_NOT_SERIALIZABLE',
      'properties.a',
    ],
    [
      'a toJSON that returns a function',
      (c) => c.track({ userId: 'u1', event: 'E', properties: { a: { toJSON: () => () => 1 } } } as never),
      'ERR_NOT_SERIALIZABLE',
      'properties.a',
    ],
    [
      'a getter that throws',
      (c) =>
        c.track({
          userId: 'u1',
          event: 'E',
          properties: {
            get x(): number {
              throw new Error('getter')
            },
          },
        }),
      'ERR_INVALID_FIELD',
      'message',
    ],
    [
      'a message whose userId getter throws',
      (c) =>
        c.track({
          event: 'E',
          get userId(): string {
            throw new Error('getter')
          },
        }),
      'ERR_INVALID_FIELD',
      'message',
    ],
    ['a revoked proxy as message', (c) => c.track(revoked() as never), 'ERR_INVALID_FIELD', 'message'],
    [
      'a Date timestamp whose toISOString throws',
      (c) =>
        c.track({
          userId: 'u1',
          event: 'E',
          timestamp: Object.assign(new Date(), {
            toISOString: () => {
              throw new Error('iso')
            },
          }),
        }),
      'ERR_INVALID_FIELD',
      'message',
    ],
    badMessageId('a null messageId', null),
    badMessageId('a numeric messageId', 42),
    badMessageId('a messageId with CR/LF', 'm1\r\nX-Injected: 1'),
    badMessageId('a messageId with a non-Latin-1 character', 'évènement-☕'),
    badMessageId('a messageId with a leading space', ' m1'),
    badMessageId('a messageId with a trailing space', 'm1 '),
    badMessageId('a messageId with a tab', 'm\t1'),
    [
      `a messageId over ${MAX_MESSAGE_ID_LENGTH} characters`,
      (c) => c.track({ userId: 'u1', event: 'E', messageId: 'm'.repeat(MAX_MESSAGE_ID_LENGTH + 1) }),
      'ERR_INVALID_FIELD',
      'messageId',
    ],
    [
      'a non-function callback',
      (c) => c.track({ userId: 'u1', event: 'E' }, 'cb' as never),
      'ERR_INVALID_FIELD',
      'callback',
    ],
  ]

  it.each(cases)('rejects %s synchronously, naming the field, and queues nothing', (_name, call, code, field) => {
    const client = newClient()
    const thrown = thrownBy(() => {
      call(client)
    })
    expect(thrown).toBeInstanceOf(ValidationError)
    expect((thrown as ValidationError).code).toBe(code)
    expect((thrown as ValidationError).field).toBe(field)
    expect(client.pending).toBe(0)
  })

  it(`accepts any messageId of 1 to ${MAX_MESSAGE_ID_LENGTH} printable ASCII characters, spaces inside included, as it travels as a header value`, () => {
    const client = newClient()
    const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, index) => String.fromCharCode(0x21 + index)).join('')
    for (const messageId of [
      printable,
      "I'm unique",
      'm'.repeat(MAX_MESSAGE_ID_LENGTH),
      'x',
      crypto.randomUUID(),
      'ajs-next-1c2f:evt/3?a=b#c',
    ]) {
      expect(codeOf(() => client.track({ userId: 'u1', event: 'E', messageId }))).toBeUndefined()
    }
    expect(isMessageId('m')).toBe(true)
    expect(isMessageId('m\n')).toBe(false)
  })

  it('takes an empty messageId as absent and sends a new UUID, as both Go clients do', async () => {
    let body = ''
    const fetch: typeof globalThis.fetch = async (request) => {
      body = await (request as Request).text()
      return new Response('{}', { status: 200 })
    }
    const client = new Client('key', { endpoint: 'http://127.0.0.1:9', flushAt: 1, fetch })
    client.track({ userId: 'u1', event: 'E', messageId: '' })
    await client.close()
    const [sent] = (JSON.parse(body) as { batch: Array<{ messageId: string }> }).batch
    expect(sent?.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it('names the character a messageId cannot carry, without echoing the rest', () => {
    const client = newClient()
    expect(() => client.track({ userId: 'u1', event: 'E', messageId: 'order-17\nsecret' })).toThrow('not "\\n" (at 9)')
  })

  it('accepts an anonymousId in place of a userId', () => {
    const client = newClient()
    expect(codeOf(() => client.track({ anonymousId: 'a1', event: 'E' }))).toBeUndefined()
    expect(client.pending).toBe(1)
  })

  it('treats a field set to undefined as left out, and fills in messageId and timestamp', () => {
    const wire = toWireMessage('track', {
      userId: 'u1',
      anonymousId: undefined,
      event: 'E',
      properties: undefined,
      context: undefined,
      integrations: undefined,
      messageId: undefined,
      timestamp: undefined,
    })
    expect(Object.keys(wire).sort()).toEqual(['event', 'messageId', 'timestamp', 'type', 'userId'])
    expect(
      codeOf(() => newClient().alias({ userId: 'u1', previousId: 'a1', anonymousId: undefined, context: undefined })),
    ).toBeUndefined()
  })

  it('rejects circular and BigInt values as not serializable, with the cause kept', () => {
    const client = newClient()
    const circular: Record<string, unknown> = {}
    circular['self'] = circular
    const thrown = thrownBy(() => {
      client.track({ userId: 'u1', event: 'E', properties: circular })
    })
    expect(thrown).toBeInstanceOf(ValidationError)
    expect((thrown as ValidationError).code).toBe('ERR_NOT_SERIALIZABLE')
    expect((thrown as ValidationError).field).toBe('properties.self')
    expect((thrown as ValidationError).message).toBe(
      '`properties.self` refers back to `properties` (a circular structure): it cannot be sent as JSON without loss.',
    )
    const shared = { plan: 'pro' }
    // The same object twice, side by side, is no cycle: JSON writes it twice.
    expect(
      codeOf(() => client.track({ userId: 'u1', event: 'E', properties: { a: shared, b: [shared] } })),
    ).toBeUndefined()
    // @ts-expect-error: the type refuses a BigInt as well; this checks that JavaScript callers are refused too
    expect(codeOf(() => client.identify({ userId: 'u1', traits: { big: 1n } }))).toBe('ERR_NOT_SERIALIZABLE')
    expect(client.pending).toBe(1)
  })

  it('keeps the cause when a toJSON throws', () => {
    const client = newClient()
    const boom = new Error('boom')
    const thrown = thrownBy(() => {
      client.track({
        userId: 'u1',
        event: 'E',
        properties: {
          money: {
            toJSON: () => {
              throw boom
            },
          },
        },
      })
    })
    expect(thrown).toMatchObject({ code: 'ERR_NOT_SERIALIZABLE', field: 'properties.money' })
    expect((thrown as ValidationError).cause).toBe(boom)
  })

  it('keeps the cause when a getter of the caller throws', () => {
    const boom = new Error('getter')
    const thrown = thrownBy(() => {
      newClient().track({
        userId: 'u1',
        event: 'E',
        properties: {
          get x(): number {
            throw boom
          },
        },
      })
    })
    expect(thrown).toMatchObject({ code: 'ERR_INVALID_FIELD', field: 'message' })
    expect((thrown as ValidationError).cause).toBe(boom)
  })

  // The message says what the field must be and what was given instead.
  it.each<[string, unknown, RegExp]>([
    ['a number for a string field', { userId: 42, event: 'E' }, /`userId` must be a string, got number/],
    ['an object for a string field', { userId: {}, event: 'E' }, /`userId` must be a string, got object/],
    [
      'null for an object field',
      { userId: 'u1', event: 'E', properties: null },
      /`properties` must be a plain object, got null/,
    ],
    [
      'an array for an object field',
      { userId: 'u1', event: 'E', properties: [] },
      /`properties` must be a plain object, got an array/,
    ],
    [
      'a Map for an object field',
      { userId: 'u1', event: 'E', properties: new Map() },
      /`properties` must be a plain object, got a Map/,
    ],
    [
      'an object without a constructor',
      { userId: 'u1', event: 'E', properties: Object.create(Object.create(null)) },
      /got a non-plain object/,
    ],
  ])('names what was given instead: %s', (_name, message, expected) => {
    expect(() => newClient().track(message as never)).toThrow(expected)
  })

  it('names what was given instead of a message object', () => {
    expect(() => newClient().track(null as never)).toThrow(/track\(\) takes a message object, got null/)
    expect(() => newClient().identify([] as never)).toThrow(/identify\(\) takes a message object, got an array/)
  })

  it('keeps what was queued when a bad call follows good ones, and keeps accepting', () => {
    const client = newClient()
    client.track({ userId: 'u1', event: 'A' })
    client.track({ userId: 'u1', event: 'B' })
    expect(codeOf(() => client.track({ userId: 'u1' } as never))).toBe('ERR_MISSING_EVENT')
    expect(client.pending).toBe(2)
    client.track({ userId: 'u1', event: 'C' })
    expect(client.pending).toBe(3)
  })
})

describe('the 32 KB per-call limit', () => {
  /** A track call whose JSON is exactly `bytes` long, padded with `unit` (1 to 4 UTF-8 bytes). */
  function trackOfSize(
    bytes: number,
    unit = 'x',
  ): { userId: string; event: string; messageId: string; timestamp: string; properties: { pad: string } } {
    const base = {
      userId: 'u1',
      event: 'E',
      messageId: 'm',
      timestamp: '2020-01-01T00:00:00.000Z',
      properties: { pad: '' },
    }
    const overhead = new TextEncoder().encode(JSON.stringify({ type: 'track', ...base })).length
    const unitBytes = new TextEncoder().encode(unit).length
    const room = bytes - overhead
    const pad = unit.repeat(Math.floor(room / unitBytes)) + 'x'.repeat(room % unitBytes)
    return { ...base, properties: { pad } }
  }

  it.each([
    ['ASCII', 'x'],
    ['2-byte', 'é'],
    ['3-byte', '€'],
    ['4-byte', '😀'],
  ])('accepts exactly 32000 bytes and rejects 32001 (%s padding)', (_name, unit) => {
    const client = newClient()
    expect(codeOf(() => client.track(trackOfSize(MAX_MESSAGE_BYTES, unit)))).toBeUndefined()
    const thrown = thrownBy(() => {
      client.track(trackOfSize(MAX_MESSAGE_BYTES + 1, unit))
    })
    expect(thrown).toBeInstanceOf(MessageTooLargeError)
    expect((thrown as MessageTooLargeError).code).toBe('ERR_MESSAGE_TOO_LARGE')
    expect((thrown as MessageTooLargeError).bytes).toBe(MAX_MESSAGE_BYTES + 1)
    expect(client.pending).toBe(1)
  })
})

describe('after close()', () => {
  it('throws ClosedError for every call type and queues nothing', async () => {
    const client = newClient()
    await client.close()
    const calls = [
      () => client.identify({ userId: 'u1' }),
      () => client.track({ userId: 'u1', event: 'E' }),
      () => client.page({ userId: 'u1' }),
      () => client.screen({ userId: 'u1' }),
      () => client.group({ userId: 'u1', groupId: 'g' }),
      () => client.alias({ userId: 'u1', previousId: 'p' }),
    ]
    for (const call of calls) {
      expect(call).toThrow(ClosedError)
      expect(codeOf(call)).toBe('ERR_CLOSED')
    }
    expect(client.pending).toBe(0)
  })
})
