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

/**
 * Whether `work` settles within `ms` (`Infinity`: waits as long as it takes). The deadline's timer
 * does not keep the process alive on its own.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  if (ms === Number.POSITIVE_INFINITY) {
    await work
    return true
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<false>((resolve) => {
    timer = setUnrefTimeout(() => resolve(false), Math.min(ms, MAX_TIMER_MS))
  })
  try {
    return await Promise.race([work.then(() => true), expired])
  } finally {
    clearTimeout(timer)
  }
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
