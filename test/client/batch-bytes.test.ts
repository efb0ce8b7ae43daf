import { describe, expect, it } from 'vitest'
import { batchEnvelope, takeBatch, type QueuedMessage } from '../../src/client/batch.js'
import { MAX_BATCH_BYTES } from '../../src/core/limits.js'
import { Queue } from '../../src/core/queue.js'
import { utf8ByteLength } from '../../src/core/utf8.js'

const envelope = batchEnvelope(undefined)

/** A queued message whose JSON is exactly `bytes` UTF-8 bytes, padded with `unit`. */
function message(seq: number, bytes: number, unit = 'x'): QueuedMessage {
  const shell = (pad: string) => JSON.stringify({ type: 'track', messageId: `m${seq}`, pad })
  const unitBytes = utf8ByteLength(unit)
  const room = bytes - utf8ByteLength(shell(''))
  const json = shell(unit.repeat(Math.floor(room / unitBytes)) + 'x'.repeat(room % unitBytes))
  return { type: 'track', messageId: `m${seq}`, json, bytes: utf8ByteLength(json), seq, callback: undefined }
}

/** Messages that fill a body to exactly `total` bytes: the envelope, then n-1 commas between them. */
function fill(total: number, count: number, unit?: string): Queue<QueuedMessage> {
  const empty = utf8ByteLength(takeBatch(new Queue<QueuedMessage>(), envelope, { maxCount: 1 }).body)
  const available = total - empty - (count - 1)
  const queue = new Queue<QueuedMessage>()
  for (let seq = 1; seq <= count; seq++) {
    const share = Math.floor(available / count) + (seq <= available % count ? 1 : 0)
    queue.push(message(seq, share, unit))
  }
  return queue
}

describe('batch bodies at the 500 KB edge', () => {
  it.each([
    ['ASCII', 'x'],
    ['multi-byte UTF-8', 'é€😀'],
  ])('packs messages filling exactly 500,000 bytes into one body (%s)', (_name, unit) => {
    const queue = fill(MAX_BATCH_BYTES, 20, unit)
    const batch = takeBatch(queue, envelope, { maxCount: Number.POSITIVE_INFINITY })
    expect(batch.messages).toHaveLength(20)
    expect(batch.bytes).toBe(MAX_BATCH_BYTES)
    expect(new TextEncoder().encode(batch.body).length).toBe(MAX_BATCH_BYTES)
    expect(queue.length).toBe(0)
  })

  it('moves the last message to the next body when the total is one byte over', () => {
    const queue = fill(MAX_BATCH_BYTES + 1, 20)
    const first = takeBatch(queue, envelope, { maxCount: Number.POSITIVE_INFINITY })
    expect(first.messages).toHaveLength(19)
    expect(new TextEncoder().encode(first.body).length).toBeLessThanOrEqual(MAX_BATCH_BYTES)
    const second = takeBatch(queue, envelope, { maxCount: Number.POSITIVE_INFINITY })
    expect(second.messages.map((m) => m.seq)).toEqual([20])
  })
})
