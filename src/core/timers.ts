type TimerHandle = ReturnType<typeof setTimeout>

/** Longest delay `setTimeout` accepts; a larger one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1

interface UnrefHost {
  Deno?: { unrefTimer?(id: number): void }
}

/**
 * Starts a timer that does not keep the process alive on its own (Node, Bun, Deno); elsewhere a
 * plain timer.
 */
export function setUnrefTimeout(callback: () => void, ms: number): TimerHandle {
  const handle = setTimeout(callback, ms)
  // Node and Bun return an object with unref(); Deno returns a number and has Deno.unrefTimer.
  const host: unknown = handle
  if (typeof host === 'number') {
    ;(globalThis as UnrefHost).Deno?.unrefTimer?.(host)
  } else {
    ;(host as { unref?: () => void } | null)?.unref?.()
  }
  return handle
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const onAbort = () => {
      clearTimeout(handle)
      reject(signal?.reason)
    }
    const handle = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
