import { isEventwireError } from '../../index.js'

/**
 * Why `eventwire dev` did not forward an event, in the event's terms: the webhook engine's error
 * names its own function (`toWebhookPayload()`), which means nothing to someone watching their app.
 * By brand and `field`, not by class: the engine runs from another copy of the library (dist/).
 */
export function whyNotForwarded(error: unknown): string {
  if (!isEventwireError(error)) return error instanceof Error ? error.message : String(error)
  if ((error as { field?: unknown }).field === 'userId') {
    return 'a webhook carries the userId and this event has none (an anonymousId is not forwarded); give the call a userId to see it at the receiver'
  }
  return error.message.replace(/^toWebhookPayload\(\): /, 'the event cannot be a webhook: ')
}
