import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { DiskQueueError } from './disk-queue-error.js'

/** The directories this process holds: a second client of one of them in this process is refused too. */
const held = new Set<string>()

/** The lock file's name in a queue's directory. */
export const LOCK_FILE = 'lock'

/** Whether a process of that id runs: `kill(pid, 0)` sends nothing, it only checks. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The process id a lock file names, or `undefined` for one torn or unreadable. */
function holderOf(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * Takes `directory` for this process: a `lock` file with its process id, made only if none
 * exists (`wx`). A lock whose process is gone is stale and taken over: a process killed with
 * SIGKILL leaves its lock behind. The same id as ours is stale too unless this process holds the
 * directory: in a container, the process after a crash often has the id of the one before.
 * Returns what lets it go.
 *
 * @throws {@link DiskQueueError} `ERR_QUEUE_LOCKED` when a running process holds it.
 */
export function lockDirectory(directory: string): () => void {
  const key = resolve(directory)
  const path = join(directory, LOCK_FILE)
  const refuse = (pid: number) =>
    new DiskQueueError(
      'ERR_QUEUE_LOCKED',
      directory,
      `The disk queue in ${directory} is in use by ${pid === process.pid ? 'another client of this process' : `process ${pid}`} (${path}). A directory is one client's queue: give each process its own directory, or close the other client first.`,
    )
  if (held.has(key)) throw refuse(process.pid)
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx')
      try {
        writeSync(fd, `${process.pid}\n`)
      } finally {
        closeSync(fd)
      }
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error
      const pid = holderOf(path)
      if (pid !== undefined && pid !== process.pid && isRunning(pid)) throw refuse(pid)
      // Stale: its process is gone. Another process may be taking it over at the same moment:
      // whichever makes the file first wins, and the other finds a running holder.
      unlinkSync(path)
    }
  }
  held.add(key)
  return () => {
    held.delete(key)
    try {
      unlinkSync(path)
    } catch {}
  }
}
