import { isObject } from '../../core/validate.js'

/** The destination's name in a call's `integrations` object. */
export const DESTINATION_NAME = 'Webhooks'

/**
 * Whether a call's `integrations` let it reach this destination: on by default, off with
 * `{ Webhooks: false }`, and off with `{ All: false }` unless `{ Webhooks: true }`.
 */
export function isEnabledFor(integrations: unknown): boolean {
  if (!isObject(integrations)) return true
  const own = integrations[DESTINATION_NAME]
  if (own === false) return false
  if (own === true) return true
  return integrations['All'] !== false
}
