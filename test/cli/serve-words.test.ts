import { describe, expect, it } from 'vitest'
import { inServeWords } from '../../src/cli/serve/serve-words.js'
import { judgeDurability } from '../../src/webhook/bullmq/durability.js'

// serve logs what the library says of Redis's durability: in the words of serve's options.

const noAof = { appendonly: false, appendfsync: 'everysec', maxmemoryPolicy: 'noeviction' }

describe("serve's words for the library's messages", () => {
  it('names --durability where the library names its option, in the refusal and the warning', () => {
    const refusal = judgeDurability(noAof, 'strict', 'WebhookQueue').refusal?.message as string
    const said = inServeWords(refusal)
    expect(said).toMatch(/^--durability: 'strict' \(the default\) refuses this Redis: it has appendonly no/)
    expect(said).toContain('run serve with --durability best-effort.')
    expect(said).not.toMatch(/WebhookQueue|pass durability/)
    const warning = judgeDurability(noAof, 'best-effort', 'WebhookWorker').warning as string
    expect(inServeWords(warning)).toMatch(
      /^serve runs with --durability best-effort on a Redis where it has appendonly no/,
    )
  })

  it('leaves out the credentials of a Redis URL, and other messages as they are', () => {
    expect(inServeWords('connect to redis://user:s3cret@10.0.0.5:6379 failed')).not.toContain('s3cret')
    expect(inServeWords('Redis did not answer in time.')).toBe('Redis did not answer in time.')
  })
})
