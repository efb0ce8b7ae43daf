import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { withoutCredentials } from '../../src/cli/redact.js'
import { withoutCredentials as libraryRule } from '../../src/core/option-checks.js'

// The CLI imports the library only through its public entries, so it keeps its own copy of the
// library's redaction rule; this keeps the copy equal to the original.
describe('the CLI redaction of URL credentials', () => {
  it('hides the user name and password of a URL, with or without a scheme', () => {
    expect(withoutCredentials('got "ftp://user:PW@host/x".')).toBe('got "***@host/x".')
    expect(withoutCredentials('user:PW@host')).toBe('***@host')
    expect(withoutCredentials('refused http://u:p/w@[::1 here')).toBe('refused http://***@[::1 here')
    // A password with a quote, a backtick or a space in it: none of it shows.
    expect(withoutCredentials(`"http://user:s3cret'Pass@127.0.0.1:x"`)).toBe('"***@127.0.0.1:x"')
    expect(withoutCredentials('"http://user:s3c`ret Pass@h:x"')).toBe('"***@h:x"')
    expect(withoutCredentials('to http://user:a b@h and http://x@y')).toBe('to http://***@y')
  })

  it("redacts every text as the library's own rule does", () => {
    const part = fc.constantFrom(
      'user',
      'PW',
      ':',
      '@',
      '/',
      '?',
      '#',
      '"',
      "'",
      '`',
      ' ',
      'http://',
      'ftp://',
      'h',
      '.',
    )
    const text = fc.oneof(
      fc.string(),
      fc.array(part, { maxLength: 12 }).map((parts) => parts.join('')),
    )
    fc.assert(
      fc.property(text, (input) => {
        expect(withoutCredentials(input)).toBe(libraryRule(input))
      }),
      { numRuns: 2_000 },
    )
  })
})
