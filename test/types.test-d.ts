// Type-level rules of the public API, checked by `npm run typecheck` (tsc), not run.
import { Client, DeliveryError, type ErrorCode, type TrackMessage } from '../src/index.js'
import { WebhookDestination } from '../src/webhook/index.js'

declare const client: Client

client.track({ userId: 'u1', event: 'E' })
client.track({ anonymousId: 'a1', event: 'E', timestamp: new Date(), messageId: 'm' })
// @ts-expect-error: a track needs an event
client.track({ userId: 'u1' })
// @ts-expect-error: a call needs a userId or an anonymousId
client.identify({ traits: { plan: 'pro' } })
// @ts-expect-error: group needs a groupId
client.group({ userId: 'u1' })
// @ts-expect-error: alias needs a previousId
client.alias({ userId: 'u1' })
// @ts-expect-error: timestamps are Dates or strings
client.page({ userId: 'u1', timestamp: 1_700_000_000 })

const accepted: boolean = client.track({ userId: 'u1', event: 'E' }, (error) => {
  const code: 'ERR_QUEUE_FULL' | 'ERR_REJECTED' | 'ERR_RETRIES_EXHAUSTED' | 'ERR_CLOSE_TIMEOUT' | undefined = error?.code
  void code
})
void accepted

client.on('error', (error) => {
  const typed: DeliveryError = error
  const code: ErrorCode = typed.code
  // @ts-expect-error: codes are a closed union
  const wrong: typeof typed.code = 'ERR_SOMETHING_ELSE'
  void code
  void wrong
})
// @ts-expect-error: unknown events are refused
client.on('delivered', () => {})

const message: TrackMessage = { userId: 'u1', event: 'E', properties: { nested: { ok: true } } }
void message

// exactOptionalPropertyTypes is on here, as in strict projects: options and optional fields take
// `undefined` (an unset environment variable) and mean the default.
new Client('k', { endpoint: process.env['EVENTWIRE_ENDPOINT'], flushAt: undefined, retry: { limit: undefined } })
void new Client('k').close({ timeout: undefined })
new WebhookDestination({ webhooks: [{ url: 'https://hooks.example.com/in', headers: undefined }], sharedSecret: process.env['WEBHOOK_SECRET'] })
