/**
 * Exit codes of every `eventwire` command, for scripts: `0` it worked, `1` it ran and failed (a
 * call was not delivered, a port was taken), `2` the command line or the message was wrong and
 * nothing was attempted.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const

/** One of the {@link EXIT} codes. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT]
