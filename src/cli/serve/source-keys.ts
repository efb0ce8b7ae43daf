import { keyDigest } from '../ingest/write-key.js'
import type { WriteKeys } from '../ingest/ingest-request.js'
import type { SourceConfig } from './serve-config.js'

/**
 * The sources of `eventwire serve`, found by write key. Keys are held and looked up by a keyed
 * digest (write-key.ts), never compared as given: a lookup takes the same time whatever the key,
 * and the process holds no table of the keys themselves beside the config it read.
 */
export class SourceKeys implements WriteKeys<SourceConfig> {
  readonly #byDigest = new Map<string, SourceConfig>()
  readonly missingHint =
    'send the write key as the HTTP Basic auth user name, or as "writeKey" in the body: the source\'s key from the config of eventwire serve.'
  readonly wrongHint = 'no source has that write key: use a key from the config of eventwire serve.'

  constructor(sources: readonly SourceConfig[]) {
    for (const source of sources) for (const key of source.writeKeys) this.#byDigest.set(keyDigest(key), source)
  }

  sourceOf(writeKey: string): SourceConfig | undefined {
    return this.#byDigest.get(keyDigest(writeKey))
  }
}
