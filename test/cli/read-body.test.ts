// How the CLI's servers read a request body: whole, up to a limit; past the limit the rest is read
// and dropped before the refusal (so a sender still writing reads the answer, where closing on
// unread data resets its connection), up to twice the limit; more than that is cut at once.
import type { IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { BodyTooLargeError, DRAIN_FACTOR, readBody } from '../../src/cli/http.js'

/** A request body of these chunks, with these headers. */
function request(chunks: string[], headers: Record<string, string> = {}): IncomingMessage & Readable {
  return Object.assign(Readable.from(chunks.map((chunk) => Buffer.from(chunk))), { headers }) as never
}

describe('readBody', () => {
  it('reads a body up to its limit, as the bytes received', async () => {
    expect((await readBody(request(['ab', 'cd']), 4)).toString()).toBe('abcd')
    expect((await readBody(request([]), 4)).length).toBe(0)
    expect((await readBody(request(['abcd'], { 'content-length': '4' }), 4)).toString()).toBe('abcd')
  })

  it('reads a body past its limit to the end before refusing it, declared or not', async () => {
    for (const headers of [{}, { 'content-length': '8' }]) {
      const body = request(['abc', 'def', 'gh'], headers)
      const refused = await readBody(body, 4).catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(BodyTooLargeError)
      expect((refused as BodyTooLargeError).limit).toBe(4)
      expect((refused as Error).message).toBe('the body is larger than 4 bytes')
      expect(body.readableEnded).toBe(true)
    }
  })

  it('cuts at once a body past twice its limit: declared, or as it comes', async () => {
    expect(DRAIN_FACTOR).toBe(2)
    const declared = request(['x'], { 'content-length': '9' })
    await expect(readBody(declared, 4)).rejects.toBeInstanceOf(BodyTooLargeError)
    expect(declared.readableEnded).toBe(false)
    const streamed = request(['abcd', 'efgh', 'i', 'jklm'])
    await expect(readBody(streamed, 4)).rejects.toBeInstanceOf(BodyTooLargeError)
    expect(streamed.readableEnded).toBe(false)
    // Exactly twice the limit is read to its end.
    const edge = request(['abcd', 'efgh'], { 'content-length': '8' })
    await expect(readBody(edge, 4)).rejects.toBeInstanceOf(BodyTooLargeError)
    expect(edge.readableEnded).toBe(true)
  })
})
