import { describe, expect, it } from 'vitest'
import { statusVerdict } from '../../src/client/retry-policy.js'

describe('statusVerdict: what a status means for the batch', () => {
  it.each([200, 201, 204, 299])('%i: delivered', (status) => expect(statusVerdict(status)).toBe('delivered'))

  it.each([408, 429, 500, 503, 599])('%i: worth another attempt', (status) =>
    expect(statusVerdict(status)).toBe('retry'),
  )

  it.each([
    [0, "a browser's opaque redirect"],
    [199, 'an informational status'],
    [300, 'Multiple Choices'],
    [301, 'a redirect, never followed'],
    [400, 'Bad Request'],
    [407, 'Proxy Authentication Required'],
    [409, 'Conflict'],
    [428, 'Precondition Required'],
    [430, 'unassigned'],
    [600, 'beyond 5xx'],
  ])('%i (%s): refused for good', (status) => expect(statusVerdict(status)).toBe('reject'))
})
