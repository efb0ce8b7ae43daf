// Scripts run by their SHA1, and by their text only when Redis does not have them.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { evalCached, type ScriptStore } from '../../src/webhook/bullmq/cached-script.js'

const SCRIPT = "return redis.call('GET', KEYS[1])"

function store(evalsha: ScriptStore['evalsha']): ScriptStore & { calls: string[] } {
  const calls: string[] = []
  return {
    calls,
    eval: async (script, keys, ...args) => {
      calls.push(`eval ${script === SCRIPT} ${keys} ${args.join(' ')}`)
      return 'by text'
    },
    ...(evalsha === undefined
      ? {}
      : {
          evalsha: async (sha: string, keys: number, ...args: Array<string | number>) => {
            calls.push(`evalsha ${sha.length} ${keys} ${args.join(' ')}`)
            return evalsha(sha, keys, ...args)
          },
        }),
  }
}

describe('evalCached', () => {
  it('runs a script by its SHA1 where the connection can', async () => {
    let given = ''
    const connection = store(async (sha) => {
      given = sha
      return 'by sha'
    })
    expect(await evalCached(connection, SCRIPT, 1, 'k', 2)).toBe('by sha')
    expect(connection.calls).toEqual(['evalsha 40 1 k 2'])
    // Redis's own name for the script: the SHA1 of its text, in hex.
    expect(given).toBe(createHash('sha1').update(SCRIPT).digest('hex'))
  })

  it('sends the text once Redis says it has no such script, and only then', async () => {
    const connection = store(async () => {
      throw new Error('NOSCRIPT No matching script. Please use EVAL.')
    })
    expect(await evalCached(connection, SCRIPT, 1, 'k')).toBe('by text')
    expect(connection.calls).toEqual(['evalsha 40 1 k', 'eval true 1 k'])
  })

  it('passes any other error on, and sends nothing more', async () => {
    const connection = store(async () => {
      throw new Error("READONLY You can't write against a read only replica.")
    })
    await expect(evalCached(connection, SCRIPT, 1, 'k')).rejects.toThrow(/READONLY/)
    expect(connection.calls).toEqual(['evalsha 40 1 k'])
  })

  it('runs by text on a connection without evalsha (a test double)', async () => {
    const connection = store(undefined)
    expect(await evalCached(connection, SCRIPT, 0)).toBe('by text')
    expect(connection.calls).toEqual(['eval true 0 '])
  })
})
