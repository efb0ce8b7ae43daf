// The conformance cases every runtime runs against the built package: plain JavaScript on Web
// APIs only, so Node, Bun, Deno, workerd and Chromium run the very same checks.

import { STANDARD_VECTOR } from './standard-webhooks-vector.mjs'

function check(condition, message) {
  if (!condition) throw new Error(message)
}

async function report(ctx, path) {
  const response = await fetch(`${ctx.base}${path}`)
  check(response.ok, `report ${path}: HTTP ${response.status}`)
  return response.json()
}

/** Properties with characters outside ASCII: signed over the exact UTF-8 bytes. */
const properties = { note: 'Café ☕' }

/**
 * Delivers one event through a destination that signs with `s3cret`, closes it, and checks that
 * it was delivered and that the receiver got one request whose signature verified; returns what
 * the receiver reports.
 */
async function deliverSigned(ctx, run, destination, event) {
  const result = await destination.deliver(event)
  await destination.close()
  check(result.status === 'delivered', `status ${result.status}: ${result.urls[0]?.lastError?.message}`)
  const seen = await report(ctx, `/hook-report/${run}`)
  check(seen.count === 1 && seen.verified === 1, `the receiver saw ${seen.count} request(s), ${seen.verified} verified`)
  return seen
}

/** The Standard Webhooks secret the cases sign with, as sink.mjs has it: 32 bytes in base64. */
const STANDARD_SECRET = `whsec_${btoa('eventwire-matrix-standard-key-32')}`

/**
 * Each case gets `ctx`: { api, base, run, vectors, writeKey, node?, collectGarbage? (Node: a full
 * garbage collection) } and throws when a check fails.
 */
export const cases = [
  {
    name: 'client: batches arrive with the write key (basic auth; in browsers in the body), the envelope and unique ids',
    async run(ctx) {
      const { Client } = ctx.api
      const run = `${ctx.run}-batches`
      const client = new Client(ctx.writeKey, { endpoint: `${ctx.base}/ingest/${run}`, flushAt: 10 })
      const errors = []
      client.on('error', (error) => errors.push(error))
      client.identify({ userId: 'u1', traits: { plan: 'pro' } })
      client.page({ userId: 'u1', name: 'Home', properties: { path: '/' } })
      client.group({ userId: 'u1', groupId: 'g1' })
      client.alias({ previousId: 'anon-1', userId: 'u1' })
      for (let index = 0; index < 21; index++) client.track({ userId: 'u1', event: 'Clicked', properties: { index } })
      await client.close()
      check(errors.length === 0, `errors: ${errors.map((error) => error.code).join(', ')}`)
      const seen = await report(ctx, `/report/${run}`)
      check(seen.messages === 25, `expected 25 messages, the sink saw ${seen.messages}`)
      check(seen.uniqueIds === 25, `expected 25 unique messageIds, saw ${seen.uniqueIds}`)
      check(
        seen.firstBatch === 10,
        `expected the first request to carry flushAt (10) messages, it carried ${seen.firstBatch}`,
      )
      check(seen.requests >= 2, `expected at least 2 requests, saw ${seen.requests}`)
      // Browsers send the key in the body, as plain text: no CORS preflight.
      const keyed = ctx.browser
        ? seen.auth.length === 1 &&
          // JSON carries "no header" as null.
          (seen.auth[0] ?? null) === null &&
          seen.writeKeys.join() === ctx.writeKey &&
          seen.contentTypes.join() === 'text/plain;charset=UTF-8'
        : seen.auth.length === 1 &&
          seen.auth[0] === `Basic ${btoa(`${ctx.writeKey}:`)}` &&
          seen.writeKeys.length === 0 &&
          seen.contentTypes.join() === 'application/json'
      check(keyed, `auth headers: ${seen.auth}; keys in bodies: ${seen.writeKeys}; content types: ${seen.contentTypes}`)
      check(seen.envelopeOk, 'a body lacked context.library, messageId or sentAt')
      check(seen.types.join() === 'alias,group,identify,page,track', `types: ${seen.types}`)
      // Browsers own User-Agent; everywhere else the library names itself.
      const ours = seen.userAgents.length === 1 && /^eventwire\/\d+\.\d+\.\d+/.test(seen.userAgents[0])
      check(
        ctx.browser ? !seen.userAgents.some((agent) => agent.startsWith('eventwire/')) : ours,
        `User-Agent: ${seen.userAgents}`,
      )
    },
  },
  {
    name: 'client: sends with its HTTP/1.1 stack on Node, with fetch on every other runtime (the export conditions)',
    async run(ctx) {
      const { Client } = ctx.api
      const run = `${ctx.run}-transport`
      const lines = []
      const logger = { log: (line) => lines.push(line), error: (line) => lines.push(line) }
      const client = new Client(ctx.writeKey, { endpoint: `${ctx.base}/ingest/${run}`, verbose: true, logger })
      client.track({ userId: 'u1', event: 'Transport' })
      await client.close()
      const expected = ctx.node ? 'http1' : 'fetch'
      check(lines[0]?.endsWith(` with ${expected}`), `expected ${expected}, the client said: ${lines[0]}`)
      const seen = await report(ctx, `/report/${run}`)
      check(seen.messages === 1, `expected 1 message, the sink saw ${seen.messages}`)
    },
  },
  {
    name: 'client: a 1.2 MB burst goes in bodies of at most 500 KB, nothing lost',
    async run(ctx) {
      const { Client } = ctx.api
      const run = `${ctx.run}-burst`
      const client = new Client(ctx.writeKey, { endpoint: `${ctx.base}/ingest/${run}`, flushAt: 500 })
      const pad = 'x'.repeat(1_000)
      for (let index = 0; index < 1_200; index++)
        client.track({ userId: 'u1', event: 'Big', properties: { index, pad } })
      await client.close()
      const seen = await report(ctx, `/report/${run}`)
      check(seen.messages === 1_200 && seen.uniqueIds === 1_200, `expected 1200 messages, saw ${seen.messages}`)
      check(seen.maxBytes <= 500_000, `a body had ${seen.maxBytes} bytes`)
      check(seen.requests >= 3, `expected at least 3 bodies, saw ${seen.requests}`)
    },
  },
  {
    name: "client: compression 'gzip' sends gzip bodies (Content-Encoding: gzip) that inflate to every message",
    async run(ctx) {
      const { Client } = ctx.api
      const run = `${ctx.run}-gzip`
      const client = new Client(ctx.writeKey, { endpoint: `${ctx.base}/ingest/${run}`, compression: 'gzip' })
      const sent = []
      client.on('sent', (info) => sent.push(info.bytes))
      for (let index = 0; index < 60; index++) {
        client.track({ userId: 'u1', event: 'Zipped', properties: { index, note: 'Café ☕'.repeat(20) } })
      }
      await client.close()
      const seen = await report(ctx, `/report/${run}`)
      check(seen.messages === 60 && seen.uniqueIds === 60, `expected 60 messages, saw ${seen.messages}`)
      check(seen.encodings.join() === 'gzip', `Content-Encoding of the bodies: ${seen.encodings}`)
      check(seen.envelopeOk, 'an inflated body lacked context.library, messageId or sentAt')
      // 'sent' counts the JSON (the 500 KB limit's bytes); the wire carries far fewer.
      check(seen.maxJsonBytes === Math.max(...sent), `JSON bytes ${seen.maxJsonBytes}, 'sent' said ${sent}`)
      check(
        seen.maxBytes * 3 < seen.maxJsonBytes,
        `${seen.maxBytes} bytes on the wire for ${seen.maxJsonBytes} of JSON`,
      )
    },
  },
  {
    name: 'client: bad calls throw typed errors and queue nothing',
    async run(ctx) {
      const { Client, ValidationError, MessageTooLargeError } = ctx.api
      const client = new Client(ctx.writeKey, { endpoint: `${ctx.base}/ingest/${ctx.run}-invalid`, flushAfter: 60_000 })
      let thrown
      try {
        client.track({ userId: 'u1' })
      } catch (error) {
        thrown = error
      }
      check(thrown instanceof ValidationError && thrown.code === 'ERR_MISSING_EVENT', `got ${thrown}`)
      try {
        client.track({ userId: 'u1', event: 'E', properties: { pad: 'é'.repeat(16_000) } })
        thrown = undefined
      } catch (error) {
        thrown = error
      }
      check(thrown instanceof MessageTooLargeError && thrown.bytes > 32_000, `got ${thrown}`)
      check(client.pending === 0, `pending ${client.pending}`)
      await client.close()
    },
  },
  {
    name: 'client: DEBUG=analytics turns on the debug log where the runtime keeps it (the environment; localStorage.debug in pages)',
    async run(ctx) {
      const { Client } = ctx.api
      // Set where this runtime's platform module reads it; workerd without Node compatibility has no
      // such place, and the client's debug log is then off unless `verbose` says otherwise.
      const host = globalThis
      let restore
      if (host.document !== undefined) {
        host.localStorage.setItem('debug', 'analytics')
        restore = () => host.localStorage.removeItem('debug')
      } else if (host.Deno !== undefined) {
        host.Deno.env.set('DEBUG', 'analytics')
        restore = () => host.Deno.env.delete('DEBUG')
      } else if (host.process?.env !== undefined) {
        host.process.env.DEBUG = 'analytics'
        restore = () => delete host.process.env.DEBUG
      } else {
        return
      }
      const lines = []
      try {
        const logger = { log: (line) => lines.push(line), error: (line) => lines.push(line) }
        const client = new Client(ctx.writeKey, { endpoint: `${ctx.base}/ingest/${ctx.run}-debug`, logger })
        client.track({ userId: 'u1', event: 'E' })
        await client.close()
      } finally {
        restore()
      }
      check(
        lines.some((line) => line.startsWith('sending batch ')),
        `expected a "sending batch" line, got ${JSON.stringify(lines)}`,
      )
      const quiet = []
      const logger = { log: (line) => quiet.push(line), error: (line) => quiet.push(line) }
      const client = new Client(ctx.writeKey, { endpoint: `${ctx.base}/ingest/${ctx.run}-quiet`, logger })
      client.track({ userId: 'u1', event: 'E' })
      await client.close()
      check(quiet.length === 0, `without the setting, expected no lines, got ${JSON.stringify(quiet)}`)
    },
  },
  {
    name: 'signPayload matches node:crypto HMAC-SHA1 vectors',
    async run(ctx) {
      const { signPayload } = ctx.api
      for (const vector of ctx.vectors) {
        const signature = await signPayload(vector.body, vector.secret)
        check(
          signature === vector.signature,
          `${JSON.stringify(vector.body).slice(0, 40)}: ${signature} != ${vector.signature}`,
        )
        const bytes = new TextEncoder().encode(vector.body)
        check((await signPayload(bytes, vector.secret)) === vector.signature, 'Uint8Array body signed differently')
      }
    },
  },
  {
    name: 'verifySignature accepts the signed body and rejects tampering',
    async run(ctx) {
      const { verifySignature } = ctx.api
      for (const vector of ctx.vectors) {
        check(await verifySignature(vector.body, vector.signature, vector.secret), 'valid signature refused')
        check(
          await verifySignature(vector.body, vector.signature.toUpperCase(), vector.secret),
          'upper-case hex refused',
        )
        check(!(await verifySignature(`${vector.body} `, vector.signature, vector.secret)), 'tampered body accepted')
        check(!(await verifySignature(vector.body, vector.signature, `${vector.secret}x`)), 'wrong secret accepted')
        check(
          !(await verifySignature(vector.body, vector.signature.slice(1), vector.secret)),
          'truncated signature accepted',
        )
        check(!(await verifySignature(vector.body, undefined, vector.secret)), 'missing signature accepted')
      }
    },
  },
  {
    name: 'verifyWebhook checks Standard Webhooks: the published vector, a fresh signature, rotation, replay',
    async run(ctx) {
      const { verifyWebhook } = ctx.api
      const vector = STANDARD_VECTOR
      const delivery = {
        headers: {
          'webhook-id': vector.id,
          'webhook-timestamp': vector.timestamp,
          'webhook-signature': vector.signature,
        },
        body: vector.body,
      }
      // The vector's body is not a webhook payload: a verified signature ends as malformed.
      const age = Math.ceil(Date.now() / 1000) - Number(vector.timestamp) + 60
      const atItsTime = await verifyWebhook(delivery, { secrets: vector.secret, toleranceSeconds: age })
      check(atItsTime.reason === 'malformed', `vector: ${JSON.stringify(atItsTime)}`)
      const replayed = await verifyWebhook(delivery, { secrets: vector.secret })
      check(replayed.reason === 'timestamp_too_old', `replay: ${JSON.stringify(replayed)}`)
      const tampered = await verifyWebhook(
        { ...delivery, body: vector.body.replace('2432232314', '2432232315') },
        { secrets: vector.secret, toleranceSeconds: age },
      )
      check(tampered.reason === 'bad_signature', `tampered: ${JSON.stringify(tampered)}`)
      // A fresh delivery, signed here with Web Crypto, verifies under rotation either way round.
      const body = JSON.stringify({ type: 'identify', userId: 'u1', timestamp: new Date().toISOString(), traits: {} })
      const timestamp = String(Math.floor(Date.now() / 1000))
      const key = await crypto.subtle.importKey(
        'raw',
        Uint8Array.from(atob(STANDARD_SECRET.slice(6)), (char) => char.charCodeAt(0)),
        { name: 'HMAC', hash: 'SHA-256' },
        false,
        ['sign'],
      )
      const mac = new Uint8Array(
        await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`m1.${timestamp}.${body}`)),
      )
      const signature = `v1,${btoa(String.fromCharCode(...mac))}`
      const fresh = {
        headers: { 'webhook-id': 'm1', 'webhook-timestamp': timestamp, 'webhook-signature': signature },
        body,
      }
      for (const secrets of [STANDARD_SECRET, [vector.secret, STANDARD_SECRET]]) {
        const verified = await verifyWebhook(fresh, { secrets })
        check(verified.ok && verified.payload.userId === 'u1', `fresh: ${JSON.stringify(verified)}`)
      }
    },
  },
  {
    name: 'webhook: a destination signs with Standard Webhooks and X-Signature at once, verified here and by node:crypto (server runtimes)',
    server: true,
    async run(ctx) {
      const { WebhookDestination, verifyWebhook } = ctx.api
      const run = `${ctx.run}-standard`
      const destination = new WebhookDestination({
        webhooks: [{ url: `${ctx.base}/hook/${run}` }],
        sharedSecret: 's3cret',
        standardSecret: STANDARD_SECRET,
      })
      const seen = await deliverSigned(ctx, run, destination, {
        type: 'track',
        userId: 'u1',
        event: 'Paid',
        properties,
      })
      for (const [secrets, scheme] of [
        [STANDARD_SECRET, 'standard'],
        ['s3cret', 'x-signature'],
      ]) {
        const verified = await verifyWebhook(seen.delivery, { secrets })
        check(
          verified.ok && verified.payload.properties.note === properties.note,
          `${scheme}: ${JSON.stringify(verified)}`,
        )
      }
    },
  },
  {
    name: 'disk-queue: a DurableClient keeps what it could not send, and the next one on the directory sends it with the same ids (server runtimes)',
    server: true,
    async run(ctx) {
      const { DurableClient, DiskQueueError } = ctx.api
      // Named at run time: the cases are bundled for browsers and Workers too, which never run
      // this one and have no node: modules for a bundler to resolve.
      const builtin = (name) => import(`node:${name}`)
      const { mkdtempSync, readdirSync, rmSync } = await builtin('fs')
      const { tmpdir } = await builtin('os')
      const { join } = await builtin('path')
      const run = `${ctx.run}-disk`
      const directory = mkdtempSync(join(tmpdir(), 'eventwire-matrix-'))
      const quiet = { log: () => undefined, error: () => undefined }
      const first = new DurableClient(ctx.writeKey, {
        endpoint: 'http://127.0.0.1:9',
        logger: quiet,
        disk: { directory },
      })
      let locked
      try {
        new DurableClient(ctx.writeKey, { logger: quiet, disk: { directory } })
      } catch (error) {
        locked = error
      }
      check(locked instanceof DiskQueueError && locked.code === 'ERR_QUEUE_LOCKED', `a second client: ${locked}`)
      for (let index = 0; index < 5; index++) first.track({ userId: 'u1', event: 'Kept', messageId: `${run}-${index}` })
      await first.close({ timeout: 0 })
      const second = new DurableClient(ctx.writeKey, {
        endpoint: `${ctx.base}/ingest/${run}`,
        logger: quiet,
        disk: { directory },
      })
      check(second.recovery.resent === 5, `sent again: ${JSON.stringify(second.recovery)}`)
      await second.close()
      const left = readdirSync(directory)
      rmSync(directory, { recursive: true, force: true })
      check(left.length === 0, `left in the directory: ${left.join(', ')}`)
      const seen = await report(ctx, `/report/${run}`)
      check(
        seen.messages === 5 && seen.uniqueIds === 5,
        `the sink saw ${seen.messages} messages, ${seen.uniqueIds} ids`,
      )
    },
  },
  {
    name: 'webhook: a destination delivers a signed event, with its HTTP/1.1 stack on Node (server runtimes)',
    server: true,
    async run(ctx) {
      const { WebhookDestination } = ctx.api
      const run = `${ctx.run}-hook`
      const destination = new WebhookDestination({
        webhooks: [{ url: `${ctx.base}/hook/${run}`, headers: { 'X-Run': run } }],
        sharedSecret: 's3cret',
      })
      const seen = await deliverSigned(ctx, run, destination, {
        type: 'track',
        userId: 'u1',
        event: 'Paid',
        properties,
      })
      check(seen.userAgent.endsWith('/1.0'), `User-Agent ${seen.userAgent}`)
      // The "imports" conditions: the HTTP/1.1 stack on Node (no fetch headers), fetch elsewhere.
      if (ctx.node) check(seen.fetchMode === null, `sent with fetch on Node (sec-fetch-mode: ${seen.fetchMode})`)
    },
  },
  {
    name: 'webhook: a self-signed HTTPS receiver fails at once with ERR_TLS_CERTIFICATE, never retried (server runtimes)',
    server: true,
    async run(ctx) {
      const { WebhookDestination } = ctx.api
      const run = `${ctx.run}-tls`
      const { url } = await report(ctx, '/tls-base')
      // A certificate failure taken for a network error would be retried: the short window shows it as attempts > 1.
      const destination = new WebhookDestination({
        webhooks: [{ url: `${url}/hook/${run}` }],
        backoff: () => 10,
        retryWindowMs: 2_000,
      })
      const result = await destination.deliver({ type: 'track', userId: 'u1', event: 'Untrusted' })
      await destination.close()
      const [outcome] = result.urls
      check(
        result.status === 'failed' && outcome?.attempts === 1 && outcome.lastError?.code === 'ERR_TLS_CERTIFICATE',
        `status ${result.status}, ${outcome?.attempts} attempt(s), ${outcome?.lastError?.code}: ${outcome?.lastError?.message}`,
      )
      const seen = await report(ctx, `/hook-report/${run}`)
      check(seen.count === 0, `the receiver saw ${seen.count} request(s)`)
    },
  },
  {
    name: 'webhook/node: a destination over createHttp1Transport({ connections: 2 }) delivers a signed event (Node)',
    node: true,
    async run(ctx) {
      const { WebhookDestination, createHttp1Transport } = ctx.api
      const run = `${ctx.run}-http1`
      const destination = new WebhookDestination({
        webhooks: [{ url: `${ctx.base}/hook/${run}` }],
        sharedSecret: 's3cret',
        transport: createHttp1Transport({ connections: 2 }),
      })
      await deliverSigned(ctx, run, destination, { type: 'identify', userId: 'u1', traits: { plan: 'pro' } })
    },
  },
  {
    // A runtime's strings and objects decide what a waiting delivery costs: V8 12 (Node 22) stopped
    // flattening an id on charCodeAt, and each delivery kept 300-400 bytes more (about 940 here).
    name: 'webhook/node: 20,000 deliveries queued for a slot hold under 800 heap bytes each (Node)',
    node: true,
    async run(ctx) {
      const { WebhookDestination } = ctx.api
      const { collectGarbage } = ctx
      // One request in flight, answered by hand at the end; every other delivery waits for its slot.
      let answer
      const transport = { send: () => new Promise((resolve) => (answer = resolve)) }
      const destination = new WebhookDestination({
        webhooks: [{ url: `${ctx.base}/hook/${ctx.run}-memory` }],
        sharedSecret: 's3cret',
        transport,
        maxConcurrencyPerUrl: 1,
      })
      const count = 20_000
      const deliveries = new Array(count)
      collectGarbage()
      const before = process.memoryUsage().heapUsed
      for (let index = 0; index < count; index++)
        deliveries[index] = destination.deliver({ type: 'track', userId: `u${index}`, event: 'Paid' })
      collectGarbage()
      const perDelivery = (process.memoryUsage().heapUsed - before) / count
      const closed = destination.close({ timeout: 0 })
      answer({ ok: true, status: 200, retryAfter: null })
      await closed
      const results = await Promise.all(deliveries)
      const unsent = results.filter((result) => result.urls[0]?.lastError?.code === 'ERR_CLOSED').length
      check(unsent === count - 1, `${unsent} of ${count - 1} queued deliveries ended ERR_CLOSED at close()`)
      check(perDelivery < 800, `${Math.round(perDelivery)} heap bytes per queued delivery (about 620 expected)`)
    },
  },
  {
    name: 'webhook/bullmq: a queued event is delivered, signed, by a worker (Node, real Redis)',
    node: true,
    async run(ctx) {
      const { WebhookQueue, WebhookWorker } = ctx.api
      const run = `${ctx.run}-bullmq`
      const connection = { host: '127.0.0.1', port: ctx.redisPort, maxRetriesPerRequest: null }
      // The matrix's Redis is a throwaway without the append-only file: weaker durability, said so.
      const durability = 'best-effort'
      const queue = new WebhookQueue({ connection, name: run, durability })
      const worker = new WebhookWorker(
        { webhooks: [{ url: `${ctx.base}/hook/${run}` }], sharedSecret: 's3cret' },
        { connection, name: run, durability },
      )
      for (const side of [queue, worker]) side.on('warning', () => undefined)
      try {
        const queued = await queue.enqueue({ type: 'track', userId: 'u1', event: 'Queued' })
        check(queued.status === 'queued', `enqueue: ${JSON.stringify(queued)}`)
        const deadline = Date.now() + 20_000
        let seen = await report(ctx, `/hook-report/${run}`)
        while (seen.count === 0 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50))
          seen = await report(ctx, `/hook-report/${run}`)
        }
        check(
          seen.count === 1 && seen.verified === 1,
          `the receiver saw ${seen.count} request(s), ${seen.verified} verified`,
        )
      } finally {
        await worker.close()
        await queue.close()
      }
    },
  },
]

/** Runs every case that applies: server-only ones where `server` is set, Node-only ones where `node` is; never throws. */
export async function runConformance(ctx, { server, node = false }) {
  const results = []
  for (const testCase of cases) {
    if ((testCase.server && !server) || (testCase.node && !node)) continue
    try {
      await testCase.run(ctx)
      results.push({ name: testCase.name, ok: true })
    } catch (error) {
      results.push({ name: testCase.name, ok: false, error: String(error?.stack ?? error) })
    }
  }
  return results
}

/**
 * The cases a server runtime (Node, Bun, Deno) runs, from the arguments the matrix passes its
 * entry script (`base run vectors redisPort`): the server cases, and the Node ones where `node`.
 */
export function runInProcess(api, args, node, collectGarbage) {
  const [base, run, vectors, redisPort] = args
  return runConformance(
    {
      api,
      base,
      run,
      vectors: JSON.parse(vectors),
      writeKey: `key-${run}`,
      redisPort: Number(redisPort),
      node,
      collectGarbage,
    },
    { server: true, node },
  )
}
