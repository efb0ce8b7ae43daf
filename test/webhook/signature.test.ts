import { execFileSync } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createWebCryptoSigner, signPayload, verifySignature } from '../../src/webhook/node.js'
import { createNodeSigner } from '../../src/webhook/node-only.js'

const body = '{"version":1,"type":"track","userId":"u1","event":"Café ☕ 😀","properties":{}}'
const secret = 's3cret'
const nodeHmac = (data: string | Buffer, key: string) => createHmac('sha1', key).update(data).digest('hex')

/** The same digest from the openssl command line, run live. */
function opensslHmac(data: string, key: string): string {
  const out = execFileSync('openssl', ['dgst', '-sha1', '-hmac', key], { input: Buffer.from(data, 'utf8') }).toString()
  return (out.trim().split(/\s+/).pop() ?? '').toLowerCase()
}

describe('signPayload', () => {
  it.each([
    ['a JSON body with multi-byte UTF-8', body, secret],
    ['an empty body', '', 'k'],
    ['a long secret', '{"a":1}', 'x'.repeat(200)],
    ['a secret with spaces and UTF-8', '{"a":1}', 'pass phrase é'],
  ])('matches node:crypto and openssl dgst -sha1 -hmac for %s', async (_name, data, key) => {
    const ours = await signPayload(data, key)
    expect(ours).toMatch(/^[0-9a-f]{40}$/)
    expect(ours).toBe(nodeHmac(data, key))
    expect(ours).toBe(opensslHmac(data, key))
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
