/**
 * `work`, or a rejection with the signal's reason as soon as `signal` aborts, whichever comes
 * first: a promise that cannot outlive its signal, even when what it waits on ignores the abort
 * (a `fetch` that does not honour its signal, or one whose combined signal no longer forwards it).
 * A value `work` yields after being abandoned goes to `onAbandoned`, to release what it holds.
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal, onAbandoned: (value: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason)
      work.then(onAbandoned, () => undefined)
    }
    // An aborted signal fires no more events: check it once, then listen.
    if (signal.aborted) onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
