/** Causes deeper than this are left out: real chains are two or three long, a cycle is endless. */
const MAX_CAUSES = 4

/** The text of one error, without its causes: the message, with the system code when the message lacks it. */
function describeOne(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  let text = error.message
  // Node's connect attempts to several addresses fail as an AggregateError with an empty message.
  if (text === '' && error instanceof AggregateError) text = [...new Set(error.errors.map(describeOne))].join('; ')
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && !text.includes(code)) text = text === '' ? code : `${text} (${code})`
  return text === '' ? error.name : text
}

/**
 * One line that names an error and what caused it. `fetch` reports every network failure as
 * `TypeError: fetch failed` and keeps the reason (`ECONNREFUSED`, `ENOTFOUND`, a certificate
 * error) in `cause`: this follows the chain so that logs and messages say what actually happened.
 *
 * @example
 * ```ts
 * describeError(new TypeError('fetch failed', { cause: refused }))
 * // 'TypeError: fetch failed: connect ECONNREFUSED 127.0.0.1:9'
 * ```
 */
export function describeError(error: unknown): string {
  // What is thrown may be anything, including an object whose toString or message getter throws.
  try {
    return describeChain(error)
  } catch {
    return 'a value that cannot be shown'
  }
}

function describeChain(error: unknown): string {
  const parts = [
    error instanceof Error && error.name !== 'Error' ? `${error.name}: ${describeOne(error)}` : describeOne(error),
  ]
  let current = error
  for (let depth = 0; depth < MAX_CAUSES && current instanceof Error && current.cause !== undefined; depth++) {
    current = current.cause
    const text = describeOne(current)
    if (!parts.some((part) => part.endsWith(text))) parts.push(text)
  }
  return parts.join(': ')
}
