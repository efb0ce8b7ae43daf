/** Resolves once `check()` (which may return a promise) is true, or rejects naming `what` after `ms`. */
export async function until(check, what, ms = 20_000) {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
