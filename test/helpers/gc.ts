import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

setFlagsFromString('--expose-gc')
/** A full garbage collection, without starting the process with --expose-gc. */
export const collectGarbage = runInNewContext('gc') as () => void

/**
 * How many of the watched objects are still alive after a full garbage collection: what some
 * structure still keeps reachable. WeakRef targets stay alive until the current job ends, so the
 * collection runs on a later macrotask.
 */
export async function countAlive(watched: readonly WeakRef<object>[]): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 0))
  collectGarbage()
  return watched.filter((ref) => ref.deref() !== undefined).length
}
