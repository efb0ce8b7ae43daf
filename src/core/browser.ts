const runtimeAgent = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent

/**
 * Whether this runtime is a browser: a page, or a browser worker (every browser's own agent starts
 * with `Mozilla/`; Node, Deno, Bun and workerd name themselves). What differs there: the browser
 * owns the `User-Agent` header, and requests to another origin are subject to CORS.
 */
export const IN_BROWSER: boolean =
  'document' in globalThis || (typeof runtimeAgent === 'string' && runtimeAgent.startsWith('Mozilla/'))
