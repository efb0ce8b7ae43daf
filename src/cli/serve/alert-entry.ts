import type { DeliveryAlert } from '../../webhook/bullmq/index.js'
import { withoutCredentials } from '../redact.js'

/**
 * A worker's staged alert as a log line: the destination and the URL's origin, never its path or
 * query, which often hold a token.
 */
export function alertEntry(alert: DeliveryAlert): Record<string, unknown> {
  const { kind, ...rest } = alert
  const url = 'url' in alert ? alert.url : undefined
  const origin = url === undefined ? undefined : originOf(url)
  const entry: Record<string, unknown> = { level: kind === 'back' ? 'info' : 'warn', event: 'alert', kind }
  for (const [name, value] of Object.entries(rest)) {
    if (name === 'url') entry['url'] = origin
    else if (name === 'error') {
      const error = value as Error & { code?: unknown }
      entry['error'] = error.code
      // The message names the URL whole: only its origin goes to the log.
      entry['reason'] = withoutCredentials(
        url === undefined ? error.message : error.message.split(url).join(origin ?? ''),
      )
    } else entry[name] = value
  }
  return entry
}

function originOf(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return '(not a URL)'
  }
}
