import { createHash } from 'node:crypto'

/**
 * The Redis keys of each URL under one prefix (`{prefix}{sha1 of the URL}`): hashed, so that any
 * URL makes a short key of safe characters; made once per URL.
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
      this.#keys.set(url, key)
    }
    return key
  }
}
