// The matrix's receiving end on 127.0.0.1: the ingest API (/ingest/RUN/v1/batch), a webhook
// receiver that checks X-Signature or Standard Webhooks with node:crypto (/hook/RUN), reports for the conformance
// cases, and the browser page with its bundle; plus the same receiver over HTTPS with a
// self-signed certificate (/tls-base says where), which no runtime may trust.
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { gunzipSync } from 'node:zlib'

/** The Standard Webhooks secret the conformance cases sign with (32 bytes), as conformance.mjs has it. */
const STANDARD_SECRET = `whsec_${Buffer.from('eventwire-matrix-standard-key-32').toString('base64')}`

const fixture = (name) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url), 'utf8')

export async function startMatrixSink({ browserBundle }) {
  const batches = new Map()
  const hooks = new Map()
  const results = new Map()
  const listOf = (map, key) => map.get(key) ?? map.set(key, []).get(key)

  let tlsBase = ''
  const handle = (request, response) => {
    const chunks = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks)
      const [, kind, run] = new URL(request.url, 'http://sink').pathname.split('/')
      const reply = (status, body = '', type = 'application/json') => {
        response.writeHead(status, { 'content-type': type })
        response.end(typeof body === 'string' ? body : JSON.stringify(body))
      }
      if (request.method === 'POST' && kind === 'ingest') {
        // A gzipped body (the client's `compression` option) is inflated: what it carried is JSON.
        const encoding = request.headers['content-encoding'] ?? 'identity'
        const json = encoding === 'gzip' ? gunzipSync(raw) : raw
        listOf(batches, run).push({
          auth: request.headers.authorization,
          contentType: request.headers['content-type'],
          userAgent: request.headers['user-agent'] ?? '',
          encoding,
          bytes: raw.length,
          jsonBytes: json.length,
          body: JSON.parse(json.toString('utf8')),
        })
        return reply(200, { success: true })
      }
      if (request.method === 'POST' && kind === 'hook') {
        const expected = createHmac('sha1', 's3cret').update(raw).digest('hex')
        const id = request.headers['webhook-id']
        const timestamp = request.headers['webhook-timestamp']
        const standard = createHmac('sha256', Buffer.from(STANDARD_SECRET.slice('whsec_'.length), 'base64'))
          .update(`${id}.${timestamp}.`)
          .update(raw)
          .digest('base64')
        listOf(hooks, run).push({
          verified:
            request.headers['x-signature'] === expected ||
            (request.headers['webhook-signature'] ?? '').split(' ').includes(`v1,${standard}`),
          // What a receiver in the runtime under test verifies again.
          delivery: {
            headers: Object.fromEntries(
              ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-signature']
                .filter((name) => request.headers[name] !== undefined)
                .map((name) => [name, request.headers[name]]),
            ),
            body: raw.toString('utf8'),
          },
          userAgent: request.headers['user-agent'] ?? '',
          // Sent by fetch (Node's, at least), never by eventwire's HTTP/1.1 stack: tells which platform sent it.
          fetchMode: request.headers['sec-fetch-mode'],
        })
        return reply(204)
      }
      if (request.method === 'POST' && kind === 'results') {
        results.set(run, JSON.parse(raw.toString('utf8')))
        return reply(204)
      }
      if (kind === 'report') {
        const received = batches.get(run) ?? []
        const messages = received.flatMap((batch) => batch.body.batch)
        return reply(200, {
          requests: received.length,
          firstBatch: received[0]?.body.batch.length ?? 0,
          messages: messages.length,
          uniqueIds: new Set(messages.map((message) => message.messageId)).size,
          maxBytes: Math.max(0, ...received.map((batch) => batch.bytes)),
          maxJsonBytes: Math.max(0, ...received.map((batch) => batch.jsonBytes)),
          encodings: [...new Set(received.map((batch) => batch.encoding))],
          auth: [...new Set(received.map((batch) => batch.auth))],
          writeKeys: [...new Set(received.map((batch) => batch.body.writeKey).filter((key) => key !== undefined))],
          contentTypes: [...new Set(received.map((batch) => batch.contentType))],
          userAgents: [...new Set(received.map((batch) => batch.userAgent))],
          types: [...new Set(messages.map((message) => message.type))].sort(),
          envelopeOk: received.every(
            (batch) =>
              batch.body.context?.library?.name === 'eventwire' &&
              typeof batch.body.messageId === 'string' &&
              typeof batch.body.sentAt === 'string',
          ),
        })
      }
      if (kind === 'hook-report') {
        const received = hooks.get(run) ?? []
        return reply(200, {
          count: received.length,
          verified: received.filter((hook) => hook.verified).length,
          delivery: received[0]?.delivery,
          userAgent: received[0]?.userAgent ?? '',
          fetchMode: received[0]?.fetchMode ?? null,
        })
      }
      if (kind === 'tls-base') return reply(200, { url: tlsBase })
      if (kind === 'browser' && request.url.includes('bundle.js')) return reply(200, browserBundle, 'text/javascript')
      if (kind === 'browser') {
        return reply(
          200,
          '<!doctype html><title>running</title><script type="module" src="/browser/bundle.js"></script>',
          'text/html',
        )
      }
      reply(404, { error: 'not found' })
    })
  }
  const server = createServer(handle)
  const tlsServer = createHttpsServer({ key: fixture('self-signed.key'), cert: fixture('self-signed.pem') }, handle)
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  await new Promise((resolve) => tlsServer.listen(0, '127.0.0.1', resolve))
  tlsBase = `https://127.0.0.1:${tlsServer.address().port}`
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    results,
    report: (run) => {
      const messages = (batches.get(run) ?? []).flatMap((batch) => batch.body.batch)
      return { messages: messages.length, uniqueIds: new Set(messages.map((message) => message.messageId)).size }
    },
    close: () =>
      Promise.all(
        [server, tlsServer].map(
          (each) =>
            new Promise((resolve) => {
              each.closeAllConnections()
              each.close(resolve)
            }),
        ),
      ),
  }
}
