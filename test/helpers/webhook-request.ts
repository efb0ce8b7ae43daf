import type { WebhookRequest } from '../../src/webhook/index.js'

/** A request a transport can send to `url`: an empty JSON body, a 2 s deadline, and `extra` over them. */
export function requestTo(url: string, extra: Partial<WebhookRequest> = {}): WebhookRequest {
  const parsed = new URL(url)
  return {
    url,
    origin: parsed.origin,
    path: parsed.pathname,
    headers: { 'content-type': 'application/json' },
    body: '{}',
    timeoutMs: 2_000,
    ...extra,
  }
}
