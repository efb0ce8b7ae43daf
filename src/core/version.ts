import { IN_BROWSER } from './browser.js'

/** The library name and version sent in every batch's `context.library`. Kept equal to package.json by a test. */
export const LIBRARY = { name: 'eventwire', version: '0.1.0' } as const

/**
 * `User-Agent: eventwire/<version>` where the runtime lets a library set it; nothing in browsers:
 * Chromium drops one set by script, and Firefox sends it, which makes the request's CORS preflight
 * ask the server to allow it. There the body's `context.library` names the library.
 */
export const USER_AGENT_HEADER: Readonly<Record<string, string>> = IN_BROWSER
  ? {}
  : { 'user-agent': `${LIBRARY.name}/${LIBRARY.version}` }
