/** The library name and version sent in every batch's `context.library`. Kept equal to package.json by a test. */
export const LIBRARY = { name: 'eventwire', version: '0.1.0' } as const
