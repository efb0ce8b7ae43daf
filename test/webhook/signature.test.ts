import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createNodeSigner } from '../../src/webhook/signing/node-signer.js'
import { signPayload, verifySignature } from '../../src/webhook/index.js'
import { createWebCryptoSigner } from '../../src/webhook/signing/signer.js'
import { constantTimeEqual, importSigningKey } from '../../src/webhook/signing/signature.js'

const body = '{"version":1,"type":"track","userId":"u1","event":"Café ☕ 😀","properties":{}}'
const secret = 's3cret'
const nodeHmac = (data: string | Buffer, key: string) => createHmac('sha1', key).update(data).digest('hex')

/**
 * The HMAC-SHA1 test cases of RFC 2202 (section 3) whose keys are text, as secrets are: cases 1, 2,
 * 4 and 5. (Cases 3, 6 and 7 use keys of 0xaa bytes, which no UTF-8 string encodes to.)
 */
const RFC_2202: Array<[string, string, string | Uint8Array, string]> = [
  ['1', '\x0b'.repeat(20), 'Hi There', 'b617318655057264e28bc0b6fb378c8ef146be00'],
  ['2', 'Jefe', 'what do ya want for nothing?', 'effcdf6ae5eb2fa2d27416d5f184df9c259a7c79'],
  [
    '4',
    String.fromCharCode(...Array.from({ length: 25 }, (_, index) => index + 1)),
    new Uint8Array(50).fill(0xcd),
    '4c9007f4026250c6bc8414f9bf50c86c2d7235da',
  ],
  ['5', '\x0c'.repeat(20), 'Test With Truncation', '4c1a03424b55e07fe7f27be1d58bb9324a9a5a04'],
]

describe('signPayload', () => {
  it.each([
    ['a JSON body with multi-byte UTF-8', body, secret],
    ['an empty body', '', 'k'],
    ['a long secret', '{"a":1}', 'x'.repeat(200)],
    ['a secret with spaces and UTF-8', '{"a":1}', 'pass phrase é'],
  ])('matches node:crypto for %s', async (_name, data, key) => {
    const ours = await signPayload(data, key)
    expect(ours).toMatch(/^[0-9a-f]{40}$/)
    expect(ours).toBe(nodeHmac(data, key))
  })

  it.each(RFC_2202)('gives the published digest of RFC 2202 test case %s', async (_case, key, data, digest) => {
    expect(await signPayload(data, key)).toBe(digest)
    // The engine's signers sign the JSON text it sends, so they take strings only.
    if (typeof data === 'string') {
      expect(await createWebCryptoSigner('sha1-hex', key)(data)).toBe(digest)
      expect(await createNodeSigner('sha1-hex', key)(data)).toBe(digest)
    }
  })

  it('gives the same signature from the Node build signer (node:crypto) and the Web Crypto one', async () => {
    expect(await createNodeSigner('sha1-hex', secret)(body)).toBe(nodeHmac(body, secret))
    expect(await createWebCryptoSigner('sha1-hex', secret)(body)).toBe(nodeHmac(body, secret))
  })

  it('holds the secret as a key that cannot be exported back out', async () => {
    const key = await importSigningKey(secret)
    expect(key.extractable).toBe(false)
    await expect(crypto.subtle.exportKey('raw', key)).rejects.toThrow()
  })

  it('signs string, Uint8Array and ArrayBuffer bodies alike', async () => {
    const bytes = new TextEncoder().encode(body)
    const expected = nodeHmac(body, secret)
    expect(await signPayload(bytes, secret)).toBe(expected)
    expect(await signPayload(bytes.buffer.slice(0) as ArrayBuffer, secret)).toBe(expected)
  })
})

describe('verifySignature', () => {
  const good = nodeHmac(body, secret)

  it('accepts the signature of the exact body, in lower or upper case hex, from any body form', async () => {
    expect(await verifySignature(body, good, secret)).toBe(true)
    expect(await verifySignature(body, good.toUpperCase(), secret)).toBe(true)
    expect(await verifySignature(new TextEncoder().encode(body), good, secret)).toBe(true)
    expect(await verifySignature(Buffer.from(body), good, secret)).toBe(true)
    expect(await verifySignature(body, [good], secret)).toBe(true)
  })

  it('takes the secret as a string only: a number is not read as its digits', async () => {
    const signedWithDigits = nodeHmac(body, '123')
    expect(await verifySignature(body, signedWithDigits, '123')).toBe(true)
    expect(await verifySignature(body, signedWithDigits, 123 as never)).toBe(false)
  })

  it('accepts an ArrayBuffer body by its bytes, and refuses it once one byte differs', async () => {
    const bytes = new TextEncoder().encode(body)
    expect(await verifySignature(bytes.slice().buffer, good, secret)).toBe(true)
    const tampered = bytes.slice()
    tampered[0] = (tampered[0] ?? 0) ^ 1
    expect(await verifySignature(tampered.buffer, good, secret)).toBe(false)
  })

  it.each<[string, unknown, unknown, unknown]>([
    ['a tampered body', body.replace('u1', 'u2'), good, secret],
    ['a re-serialized body', JSON.stringify(JSON.parse(body), null, 1), good, secret],
    ['the wrong secret', body, good, 'other'],
    ['an empty secret', body, good, ''],
    ['a truncated signature', body, good.slice(0, 39), secret],
    ['a signature one character longer', body, `${good}0`, secret],
    ['a non-hex signature', body, 'z'.repeat(40), secret],
    ['a sha256-length signature', body, 'a'.repeat(64), secret],
    ['an empty signature', body, '', secret],
    ['a missing signature', body, undefined, secret],
    ['a null signature', body, null, secret],
    ['two header values', body, [good, good], secret],
    ['a numeric signature', body, 12345, secret],
    ['an object that reads as the right signature', body, { toLowerCase: () => good, toString: () => good }, secret],
    ['a parsed object as body', JSON.parse(body), good, secret],
    ['a signature with one flipped digit', body, (good[0] === 'a' ? 'b' : 'a') + good.slice(1), secret],
  ])('returns false, without throwing, for %s', async (_name, data, signature, key) => {
    await expect(verifySignature(data as string, signature as string, key as string)).resolves.toBe(false)
  })
})

/** A buffer holding `text`'s bytes, then transferred away (as postMessage does): its bytes are gone. */
function detached(text: string): { buffer: ArrayBuffer; view: Uint8Array } {
  const view = new TextEncoder().encode(text)
  const buffer = view.buffer as ArrayBuffer
  structuredClone(buffer, { transfer: [buffer] })
  return { buffer, view }
}

/** A proxy whose every trap throws: what a hostile or revoked object does. */
const hostile = new Proxy(
  {},
  Object.fromEntries(
    (['get', 'has', 'getPrototypeOf', 'ownKeys', 'getOwnPropertyDescriptor', 'apply', 'construct'] as const).map(
      (trap) => [
        trap,
        () => {
          throw new Error(`trap ${trap}`)
        },
      ],
    ),
  ),
)

describe('verifySignature on bodies it cannot check', () => {
  it('resolves false for a detached ArrayBuffer and a view on one, even when their signature would match an empty body', async () => {
    const emptySignature = await signPayload('', secret)
    const { buffer, view } = detached(body)
    await expect(verifySignature(buffer, emptySignature, secret)).resolves.toBe(false)
    await expect(verifySignature(view, emptySignature, secret)).resolves.toBe(false)
    await expect(verifySignature(detached(body).buffer, nodeHmac(body, secret), secret)).resolves.toBe(false)
  })

  it('checks a view with an offset, and a Uint8Array on a SharedArrayBuffer, by their own bytes', async () => {
    const bytes = new TextEncoder().encode(`xx${body}yy`)
    const view = new Uint8Array(bytes.buffer, 2, bytes.length - 4)
    await expect(verifySignature(view, nodeHmac(body, secret), secret)).resolves.toBe(true)
    const shared = new Uint8Array(new SharedArrayBuffer(view.length))
    shared.set(view)
    await expect(verifySignature(shared, nodeHmac(body, secret), secret)).resolves.toBe(true)
    await expect(verifySignature(shared.buffer as never, nodeHmac(body, secret), secret)).resolves.toBe(false)
  })

  it('resolves false for proxies that throw on any access, as body, signature or secret', async () => {
    const good = nodeHmac(body, secret)
    await expect(verifySignature(hostile as never, good, secret)).resolves.toBe(false)
    await expect(verifySignature(body, hostile as never, secret)).resolves.toBe(false)
    await expect(verifySignature(body, good, hostile as never)).resolves.toBe(false)
    const { proxy, revoke } = Proxy.revocable([good], {})
    revoke()
    await expect(verifySignature(body, proxy as never, secret)).resolves.toBe(false)
  })

  it('resolves a boolean, never rejects, for arbitrary inputs of any type (property)', async () => {
    // fast-check inspects the values it generates: it gets a marker, replaced by the proxy in the property.
    const HOSTILE = Symbol('hostile')
    const unmask = (value: unknown) => (value === HOSTILE ? hostile : value)
    const bodies = fc.oneof(
      fc.anything({
        withBigInt: true,
        withMap: true,
        withSet: true,
        withTypedArray: true,
        withSparseArray: true,
        withNullPrototype: true,
      }),
      fc.string({ unit: 'binary' }),
      fc.uint8Array().map((bytes) => bytes.buffer),
      fc.uint8Array({ minLength: 2 }).map((bytes) => new Uint8Array(bytes.buffer, 1)),
      fc.uint8Array().map((bytes) => new Uint16Array(bytes.buffer, 0, bytes.length >> 1)),
      fc.uint8Array().map((bytes) => new DataView(bytes.buffer)),
      fc.tuple(fc.uint8Array(), fc.boolean()).map(([bytes, asView]) => {
        const shared = new Uint8Array(new SharedArrayBuffer(bytes.length))
        shared.set(bytes)
        return asView ? shared : shared.buffer
      }),
      fc.string().map((text) => detached(text).buffer),
      fc.string().map((text) => detached(text).view),
      fc.constant(HOSTILE),
      fc.constant('x'.repeat(2_000_000)),
    )
    const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 40, maxLength: 40 })
    const signatures = fc.oneof(fc.anything(), hex, fc.array(hex, { maxLength: 2 }), fc.constant(HOSTILE))
    const secrets = fc.oneof(fc.anything(), fc.string(), fc.constant(HOSTILE))
    await fc.assert(
      fc.asyncProperty(bodies, signatures, secrets, async (data, signature, key) => {
        const answer = await verifySignature(unmask(data) as never, unmask(signature) as never, unmask(key) as never)
        expect(typeof answer).toBe('boolean')
      }),
      { numRuns: 500 },
    )
  })

  it('matches the signature of its own bytes for every body form (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array(), fc.nat({ max: 8 }), fc.string({ minLength: 1 }), async (bytes, offset, key) => {
        const padded = new Uint8Array(bytes.length + offset)
        padded.set(bytes, offset)
        const view = new Uint8Array(padded.buffer, offset)
        const expected = createHmac('sha1', key).update(bytes).digest('hex')
        expect(await verifySignature(view, expected, key)).toBe(true)
        expect(await verifySignature(bytes.slice().buffer, expected.toUpperCase(), key)).toBe(true)
      }),
      { numRuns: 200 },
    )
  })
})

describe('constantTimeEqual', () => {
  it.each([
    ['the same string', 'a1b2', 'a1b2', true],
    ['two empty strings', '', '', true],
    ['a prefix (shorter)', 'a1b2', 'a1b', false],
    ['a longer string that starts the same', 'a1b2', 'a1b2c', false],
    ['an empty string against a non-empty one', '', 'a', false],
    ['a difference in the first character', 'a1b2', 'b1b2', false],
    ['a difference in the last character', 'a1b2', 'a1b3', false],
    ['a case difference', 'abcd', 'abcD', false],
  ])('is true only for equal strings of equal length: %s', (_name, expected, actual, equal) => {
    expect(constantTimeEqual(expected, actual)).toBe(equal)
    expect(constantTimeEqual(actual, expected)).toBe(equal)
  })
})
