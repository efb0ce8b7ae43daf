// A webhook receiver in Express that checks X-Signature before trusting a body.
//
//   WEBHOOK_SECRET=s3cret PORT=3000 node examples/receiver-express.mjs
//
// The signature covers the exact bytes sent. Read the body raw (express.raw), verify, then parse:
// express.json() followed by JSON.stringify(req.body) gives different bytes (key order, spacing,
// escapes) and a signature that no longer matches.
//
// express.raw() only reads bodies whose Content-Type matches its `type` option; with
// `type: 'application/json'` a correctly signed request sent as text/plain, as a form, or without a
// content type leaves req.body empty and is turned away with 401. `type: () => true` reads every body
// as bytes: the content type is not part of the signature, so it must not decide what gets verified.
import express from 'express'
import { verifySignature } from 'eventwire/webhook'

/** Builds the app; exported so the tests can run it. */
export function createReceiver(
  secret,
  onEvent = (event) => console.log('verified', event.type, event.userId ?? event['User ID']),
) {
  const app = express()
  app.post('/webhooks', express.raw({ type: () => true, limit: '1mb' }), async (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)
    if (!(await verifySignature(body, req.get('x-signature'), secret))) {
      res.status(401).json({ error: 'bad signature' })
      return
    }
    onEvent(JSON.parse(body.toString('utf8')))
    res.status(204).end()
  })
  return app
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env.WEBHOOK_SECRET
  // Stop at start: a receiver without its secret would refuse every request, with 401s nobody reads.
  if (!secret) throw new Error('WEBHOOK_SECRET is not set: set it to the secret the sender signs with')
  const port = Number(process.env.PORT ?? 3000)
  createReceiver(secret).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/webhooks`))
}
