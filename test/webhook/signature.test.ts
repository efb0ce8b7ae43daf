import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createWebCryptoSigner, signPayload, verifySignature } from '../../src/webhook/node.js'
import { createNodeSigner } from '../../src/webhook/node-only.js'

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
  ['4', String.fromCharCode(...Array.from({ length: 25 }, (_, index) => index + 1)), new Uint8Array(50).fill(0xcd), '4c9007f4026250c6bc8414f9bf50c86c2d7235da'],
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
      expect(await createWebCryptoSigner(key)(data)).toBe(digest)
      expect(await createNodeSigner(key)(data)).toBe(digest)
    }
  })

  it('gives the same signature from the Node build signer (node:crypto) and the Web Crypto one', async () => {
    expect(await createNodeSigner(secret)(body)).toBe(nodeHmac(body, secret))
    expect(await createWebCryptoSigner(secret)(body)).toBe(nodeHmac(body, secret))
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
    ['a parsed object as body', JSON.parse(body), good, secret],
    ['a signature with one flipped digit', body, (good[0] === 'a' ? 'b' : 'a') + good.slice(1), secret],
  ])('returns false, without throwing, for %s', async (_name, data, signature, key) => {
    await expect(verifySignature(data as string, signature as string, key as string)).resolves.toBe(false)
  })
})
