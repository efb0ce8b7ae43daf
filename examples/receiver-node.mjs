// A webhook receiver on plain node:http, no framework, that checks X-Signature before trusting a body.
//
//   WEBHOOK_SECRET=s3cret PORT=3000 node examples/receiver-node.mjs
//
// The signature covers the exact bytes sent. Collect the request's chunks as Buffers and join them
// once (decoding each chunk to a string on its own can split a multi-byte character such as "é"
// across two chunks), cap the size (413 past 1 MB), verify those bytes, then parse.
import { createServer } from 'node:http'
import { verifySignature } from 'eventwire/webhook'

const LIMIT = 1024 * 1024

/** Builds the server (not listening yet); exported so the tests can run it. */
export function createReceiver(
  secret,
  onEvent = (event) => console.log('verified', event.type, event.userId ?? event['User ID']),
) {
  return createServer((req, res) => {
    if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://localhost').pathname !== '/webhooks') {
      res.writeHead(404).end()
      return
    }
    const tooLarge = () => {
      res.writeHead(413, { connection: 'close' }).end()
      req.destroy()
    }
    if (Number(req.headers['content-length'] ?? 0) > LIMIT) return tooLarge()
    const chunks = []
    let size = 0
    let done = false
    req.on('data', (chunk) => {
      if (done) return
      size += chunk.length
      if (size > LIMIT) {
        done = true
        tooLarge()
        return
      }
      chunks.push(chunk)
    })
    req.on('error', () => res.destroy())
    req.on('end', async () => {
      if (done) return
      done = true
      const body = Buffer.concat(chunks)
      if (!(await verifySignature(body, req.headers['x-signature'], secret))) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad signature"}')
        return
      }
      onEvent(JSON.parse(body.toString('utf8')))
      res.writeHead(204).end()
    })
  })
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env.WEBHOOK_SECRET
  // Stop at start: a receiver without its secret would refuse every request, with 401s nobody reads.
  if (!secret) throw new Error('WEBHOOK_SECRET is not set: set it to the secret the sender signs with')
  const port = Number(process.env.PORT ?? 3000)
  createReceiver(secret).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/webhooks`))
}
