/**
 * What `action` throws, or `undefined` when it returns: lets a test assert on an error's fields
 * without a try/catch around every call.
 */
export function thrownBy(action: () => unknown): unknown {
  try {
    action()
  } catch (error) {
    return error
  }
  return undefined
}
