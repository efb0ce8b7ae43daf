// A webhook receiver in Fastify that checks X-Signature before trusting a body.
//
//   WEBHOOK_SECRET=s3cret PORT=3000 node examples/receiver-fastify.mjs
//
// The signature covers the exact bytes sent. Fastify's built-in JSON parser hands the route an
// object (and its text parser a string), and it answers 415 to content types it has no parser for:
// JSON.stringify(request.body) is not the bytes that were signed (key order, spacing, escapes), so
// a valid signature fails. Inside a plugin (so the rest of the app keeps its parsers), drop the
// parsers and read every content type, a missing one included, as a Buffer; verify, then parse.
import Fastify from 'fastify'
import { verifySignature } from 'eventwire/webhook'

/** Builds the app; exported so the tests can run it. */
export function createReceiver(
  secret,
  onEvent = (event) => console.log('verified', event.type, event.userId ?? event['User ID']),
) {
  const app = Fastify()
  app.register((webhooks, _options, done) => {
    webhooks.removeAllContentTypeParsers()
    webhooks.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) =>
      done(null, body),
    )
    webhooks.post('/webhooks', async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0)
      if (!(await verifySignature(body, request.headers['x-signature'], secret))) {
        return reply.code(401).send({ error: 'bad signature' })
      }
      onEvent(JSON.parse(body.toString('utf8')))
      return reply.code(204).send()
    })
    done()
  })
  return app
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env.WEBHOOK_SECRET
  // Stop at start: a receiver without its secret would refuse every request, with 401s nobody reads.
  if (!secret) throw new Error('WEBHOOK_SECRET is not set: set it to the secret the sender signs with')
  const port = Number(process.env.PORT ?? 3000)
  const address = await createReceiver(secret).listen({ port, host: '127.0.0.1' })
  console.log(`listening on ${address}/webhooks`)
}
