// Shaping events before they leave: a default context on every batch, and middleware recipes
// (scrub personal data, a consent gate, sampling, a request id per message). Each recipe is a
// few lines to copy and adapt: which fields, where consent lives, which rates are yours.
//
//   npm run build && node examples/enrich-and-filter.mjs
import { createServer } from 'node:http'
import { Client } from 'eventwire'

const EMAIL = /[^\s@]+@[^\s@]+\.[^\s@]+/g

/**
 * Scrubs personal data: removes the listed paths (`traits.email`, `properties.card.number`) and
 * masks e-mail addresses in every string of `properties`, `traits` and `context`.
 */
export function scrub({ paths = [], pattern = EMAIL, mask = '[redacted]' } = {}) {
  const clean = (value) => {
    if (typeof value === 'string') return value.replace(pattern, mask)
    if (Array.isArray(value)) return value.map(clean)
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, clean(inner)]))
    }
    return value
  }
  return function scrubPersonalData(message) {
    for (const path of paths) {
      const keys = path.split('.')
      const last = keys.pop()
      let parent = message
      for (const key of keys) parent = parent?.[key]
      if (parent !== null && typeof parent === 'object') delete parent[last]
    }
    for (const field of ['properties', 'traits', 'context']) {
      if (message[field] !== undefined) message[field] = clean(message[field])
    }
    return message
  }
}

/**
 * A consent gate: drops every call until `hasConsent()` says yes. Dropped, not held: what a user
 * does before agreeing is not collected at all, and nothing waits in memory for a yes that may
 * never come. Each dropped call is told (`'dropped'`, and its callback hears `'dropped'`).
 */
export function consentGate(hasConsent) {
  return function consent(message) {
    return hasConsent() ? message : null
  }
}

/** Samples noisy events: keeps a `track` named in `rates` with that probability; others all pass. */
export function sample(rates, random = Math.random) {
  return function sampling(message) {
    const rate = message.type === 'track' ? rates[message.event] : undefined
    return rate === undefined || random() < rate ? message : null
  }
}

/** Adds the current request's id to each message's context (from AsyncLocalStorage, say). */
export function withRequestId(currentRequestId) {
  return function requestId(message) {
    const id = currentRequestId()
    return id === undefined ? message : { ...message, context: { ...message.context, requestId: id } }
  }
}

/** Runs the example against `endpoint`; returns the outcomes it printed, for the test. */
export async function run(endpoint, print = console.log) {
  let consented = false
  let requestId = 'req-1'
  const analytics = new Client('write-key', {
    endpoint,
    defaultContext: { app: { name: 'shop', version: '2.4.1' }, environment: 'production' },
    middleware: [consentGate(() => consented), scrub({ paths: ['traits.phone'] })],
  })
    .use(sample({ 'Page Scrolled': 0 }))
    .use(withRequestId(() => requestId))
  analytics.on('dropped', (info) => print(`dropped by ${info.middleware}: ${info.type}`))

  analytics.track({ userId: 'u1', event: 'Viewed Pricing' })
  consented = true
  analytics.identify({ userId: 'u1', traits: { email: 'ada@example.com', phone: '+44 20 7946 0000', plan: 'pro' } })
  analytics.track({ userId: 'u1', event: 'Page Scrolled', properties: { depth: 50 } })
  requestId = 'req-2'
  analytics.track({ userId: 'u1', event: 'Signed Up', properties: { note: 'invited by bob@example.com' } })
  await analytics.close()
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const received = []
  const sink = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      received.push(JSON.parse(body))
      response.end('{}')
    })
  })
  await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve))
  await run(`http://127.0.0.1:${sink.address().port}`)
  for (const batch of received) {
    console.log('batch context:', JSON.stringify(batch.context))
    for (const message of batch.batch) {
      console.log('sent:', message.type, message.event ?? '', JSON.stringify(message.properties ?? message.traits))
    }
  }
  sink.close()
}
