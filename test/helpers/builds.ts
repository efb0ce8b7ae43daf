import { Client as FetchClient } from '../../src/index.js'
import { Client as NodeClient } from '../../src/node.js'

/**
 * The two builds of `Client`, for suites that run against real servers: the isomorphic one (ky
 * over `fetch`: browsers, Deno, Bun, Workers) and the Node build (undici's `Pool`). For
 * `describe.each`.
 */
export const CLIENT_BUILDS: ReadonlyArray<readonly [name: string, Client: typeof FetchClient]> = [
  ['fetch build', FetchClient],
  ['Node build', NodeClient],
]
