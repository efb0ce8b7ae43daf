import { OptionsError } from './errors/options-error.js'
import type { SchemaIssue } from './standard-schema.js'

/**
 * Where {@link definePlan} leaves a plan's run-time check on the plan it returns. The client reads
 * it there instead of importing the checks, so that a client without a plan carries none of them
 * (the browser bundle does not grow). `Symbol.for`: the same key in every copy of the library.
 */
export const PLAN_CHECKER: unique symbol = Symbol.for('eventwire.planChecker') as never

/** A call that breaks the plan: where, and what the schema (or the plan) says. */
export interface PlanViolation {
  /** The wire name of the offending field and the path in it, e.g. `properties.total` or `event`. */
  readonly field: string
  readonly issues: readonly SchemaIssue[]
}

/**
 * Checks one call of `type` against the plan and returns the message to send. A call that breaks
 * it is refused (a thrown `ValidationError`) or, in `'report'` mode, told to `report` and sent as
 * given.
 */
export type PlanChecker = (type: string, message: unknown, report: (violation: PlanViolation) => void) => unknown

/** What a plan carries under {@link PLAN_CHECKER}: makes its checker for a `planCheck` mode (`undefined` with `'off'`). */
export type PlanCheckerFactory = (mode: 'refuse' | 'report' | 'off' | undefined) => PlanChecker | undefined

/**
 * The checker of a plan made by `definePlan`, for the `planCheck` mode given (already checked);
 * `undefined` with `'off'`.
 *
 * @throws {@link OptionsError} for a plan `definePlan` did not make.
 */
export function planChecker(plan: unknown, mode: 'refuse' | 'report' | 'off' | undefined): PlanChecker | undefined {
  const make = (plan as { [PLAN_CHECKER]?: unknown } | null)?.[PLAN_CHECKER]
  if (typeof make !== 'function') throw new OptionsError('plan', 'expected a plan made with definePlan().')
  return (make as PlanCheckerFactory)(mode)
}
