/** The library name and version sent in every batch's `context.library`. Kept equal to package.json by a test. */
export const LIBRARY = { name: 'eventwire', version: '0.1.0' } as const

const runtimeAgent = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent

/**
 * Whether this runtime is a browser: a page, or a browser worker (every browser's own agent starts
 * with `Mozilla/`; Node, Deno, Bun and workerd name themselves). Browsers own the `User-Agent`
 * header: Chromium drops one set by script, and Firefox sends it, which makes the request's CORS
 * preflight ask the server to allow it. There the body's `context.library` names the library.
 */
const IN_BROWSER = 'document' in globalThis || (typeof runtimeAgent === 'string' && runtimeAgent.startsWith('Mozilla/'))

/** `User-Agent: eventwire/<version>` where the runtime lets a library set it; nothing in browsers. */
export const USER_AGENT_HEADER: Readonly<Record<string, string>> = IN_BROWSER
  ? {}
  : { 'user-agent': `${LIBRARY.name}/${LIBRARY.version}` }
