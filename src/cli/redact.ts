/**
 * `text` with the user name and password of every URL in it replaced by `***` (`https://***@host`),
 * a `user:password@` without a scheme at the start or after a quote included: for the library's
 * messages, which may quote a URL the user gave on the command line.
 * Everything up to the last `@` of the URL goes, `/`, `?` and `#` included: in a string that does
 * not parse, nobody can tell where a password with a `/` in it ends.
 *
 * The library redacts its own messages with the same rule (src/core/option-checks.ts); the CLI
 * keeps its own copy because it imports the library only through its public entries, and
 * test/cli/redact.test.ts keeps the two equal.
 */
export function withoutCredentials(text: string): string {
  return text.replace(/([a-z][a-z\d+.-]*:\/\/)[^"]*@/gi, '$1***@').replace(/(^|")[^"\s]*@/g, '$1***@')
}
