import { createHash } from 'node:crypto'

/** A Redis connection that runs Lua: `eval` always, `evalsha` on a real one (ioredis, single or cluster). */
export interface ScriptStore {
  eval(script: string, keys: number, ...args: Array<string | number>): Promise<unknown>
  evalsha?(sha: string, keys: number, ...args: Array<string | number>): Promise<unknown>
}

/** Scripts' SHA1s, computed once each: the scripts are constants of the package, a few dozen. */
const SHAS = new Map<string, string>()
const MAX_SHAS = 100

/**
 * Runs `script` by its SHA1 (`EVALSHA`), and sends its text (`EVAL`) only when Redis does not
 * have it yet (after a start or `SCRIPT FLUSH`). Sending the text each time cost Redis a SHA1 of
 * it, and the worker its encoding, per call: with a read per URL first met, the most of both
 * where a worker meets tens of thousands of URLs.
 */
export function evalCached(
  store: ScriptStore,
  script: string,
  keys: number,
  ...args: Array<string | number>
): Promise<unknown> {
  if (typeof store.evalsha !== 'function') return store.eval(script, keys, ...args)
  let sha = SHAS.get(script)
  if (sha === undefined) {
    sha = createHash('sha1').update(script).digest('hex')
    if (SHAS.size < MAX_SHAS) SHAS.set(script, sha)
  }
  return store.evalsha(sha, keys, ...args).catch((error: unknown) => {
    if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return store.eval(script, keys, ...args)
    throw error
  })
}
