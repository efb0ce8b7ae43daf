import { createHash } from 'node:crypto'

/**
 * The Redis keys of each URL under one prefix (`{prefix}{sha1 of the URL}`): hashed, so that any
 * URL makes a short key of safe characters; made once per URL while at most `kept` are held, and
 * made again after that (a process that meets URLs without end holds a bounded number of keys).
 */
export class UrlKeys {
  readonly #prefix: string
  readonly #kept: number
  readonly #keys = new Map<string, string>()

  constructor(prefix: string, kept = 10_000) {
    this.#prefix = prefix
    this.#kept = kept
  }

  of(url: string): string {
    let key = this.#keys.get(url)
    if (key === undefined) {
      key = this.#prefix + createHash('sha1').update(url).digest('hex')
      if (this.#keys.size >= this.#kept) this.#keys.clear()
      this.#keys.set(url, key)
    }
    return key
  }
}
