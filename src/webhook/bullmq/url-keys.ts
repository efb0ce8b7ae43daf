import { createHash } from 'node:crypto'

/** Keys one {@link UrlKeys} holds at most: past that, it starts again. */
const KEYS_KEPT = 10_000

/**
 * The Redis keys of each URL under one prefix (`{prefix}{sha1 of the URL}`): hashed, so that any
 * URL makes a short key of safe characters; made once per URL while at most {@link KEYS_KEPT} are
 * held, and made again after that (a process that meets URLs without end holds a bounded number).
 */
export class UrlKeys {
  readonly #prefix: string
  readonly #keys = new Map<string, string>()

  constructor(prefix: string) {
    this.#prefix = prefix
  }

  of(url: string): string {
    let key = this.#keys.get(url)
    if (key === undefined) {
      key = this.#prefix + createHash('sha1').update(url).digest('hex')
      if (this.#keys.size >= KEYS_KEPT) this.#keys.clear()
      this.#keys.set(url, key)
    }
    return key
  }
}
