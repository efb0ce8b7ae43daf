// How each library under test is driven: one small adapter each, with the library's defaults.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const deps = join(import.meta.dirname, '.deps', 'package.json')
const importPeer = async (name) => import(pathToFileURL(createRequire(deps).resolve(name)).href)
/** The package under test: the build by default; the sources when the smoke test says so. */
const eventwireEntry = process.env.EVENTWIRE_ENTRY ?? 'eventwire'

/** eventwire with its defaults but for `options`. */
async function eventwireWith(sink, options = {}) {
  const { Client } = await import(eventwireEntry)
  const client = new Client('bench-key', { endpoint: sink, ...options })
  client.on('error', (error) => console.error(error.code, error.message))
  return {
    send: (index, properties) => client.track({ userId: `user-${index % 1000}`, event: 'Item Viewed', properties }),
    waitForRoom: () => client.whenDrained(),
    finish: () => client.close({ timeout: Number.POSITIVE_INFINITY }),
  }
}

/** eventwire's `DurableClient` (eventwire/disk-queue), its queue in a directory of its own, removed at the end. */
async function eventwireOnDisk(sink) {
  const { DurableClient } = await import(process.env.EVENTWIRE_DISK_QUEUE ?? `${eventwireEntry}/disk-queue`)
  const directory = mkdtempSync(join(tmpdir(), 'eventwire-bench-disk-'))
  const client = new DurableClient('bench-key', { endpoint: sink, disk: { directory } })
  client.on('error', (error) => console.error(error.code, error.message))
  return {
    send: (index, properties) => client.track({ userId: `user-${index % 1000}`, event: 'Item Viewed', properties }),
    waitForRoom: () => client.whenDrained(),
    finish: async () => {
      await client.close({ timeout: Number.POSITIVE_INFINITY })
      rmSync(directory, { recursive: true, force: true })
    },
  }
}

/** Each adapter: `send(index, properties)` returns false when the library asks the producer to wait. */
export const libraries = {
  eventwire: (sink) => eventwireWith(sink),
  /** With its queue on disk (`DurableClient`): what the disk costs over the client in memory. */
  'eventwire disk': (sink) => eventwireOnDisk(sink),
  /** With `compression: 'gzip'` (the default threshold): the bytes it saves, and what they cost. */
  'eventwire gzip': (sink) => eventwireWith(sink, { compression: 'gzip' }),

  async segment(sink) {
    const { Analytics } = await importPeer('@segment/analytics-node')
    const analytics = new Analytics({ writeKey: 'bench-key', host: sink })
    return {
      send: (index, properties) =>
        void analytics.track({ userId: `user-${index % 1000}`, event: 'Item Viewed', properties }),
      finish: () => analytics.closeAndFlush({ timeout: 600_000 }),
    }
  },

  async posthog(sink) {
    const { PostHog } = await importPeer('posthog-node')
    // posthog-node drops what exceeds maxQueueSize (default 1,000) without telling the caller: raise it so nothing is lost.
    const posthog = new PostHog('bench-key', { host: sink, maxQueueSize: 10_000_000 })
    return {
      send: (index, properties) =>
        void posthog.capture({ distinctId: `user-${index % 1000}`, event: 'Item Viewed', properties }),
      finish: () => posthog.shutdown(600_000),
    }
  },

  async rudderstack(sink) {
    const { default: Analytics } = await importPeer('@rudderstack/rudder-sdk-node')
    const client = new Analytics('bench-key', { dataPlaneUrl: sink, logLevel: 'error' })
    return {
      send: (index, properties) =>
        void client.track({ userId: `user-${index % 1000}`, event: 'Item Viewed', properties }),
      // flush() sends one batch of flushAt; call it until the queue is empty.
      async finish() {
        while (client.queue.length > 0) await new Promise((resolve) => client.flush(resolve))
      },
    }
  },

  /** The physical limit: batches built by hand, by concatenation, over one keep-alive connection. */
  floor: (sink) => handBuilt(sink, { flushAt: Number.POSITIVE_INFINITY }),

  /**
   * The physical limit under the client's own flush policy: a batch leaves when 20 events wait and
   * no request is in flight (the rest wait for the response), over one keep-alive connection. What
   * the client costs beyond this is its own work per call and per request.
   */
  floorSamePolicy: (sink) => handBuilt(sink, { flushAt: 20 }),
}

/** Builds batches by hand; `flushAt`: events that make a batch leave when no request is in flight. */
async function handBuilt(sink, { flushAt }) {
  const { Pool } = await import('undici')
  const pool = new Pool(sink, { connections: 1 })
  const sent = []
  let body = ''
  let queued = 0
  let inFlight = false
  let isoAt = 0
  let iso = ''
  const post = () => {
    const request = pool.request({
      method: 'POST',
      path: '/v1/batch',
      headers: { 'content-type': 'application/json' },
      body: `{"batch":[${body}]}`,
    })
    inFlight = true
    sent.push(
      request
        .then((response) => response.body.dump())
        .then(() => {
          inFlight = false
          if (queued >= flushAt) post()
        }),
    )
    body = ''
    queued = 0
  }
  return {
    send(index, properties) {
      const now = Date.now()
      if (now !== isoAt) {
        isoAt = now
        iso = new Date(now).toISOString()
      }
      const json = JSON.stringify({
        type: 'track',
        userId: `user-${index % 1000}`,
        event: 'Item Viewed',
        properties,
        messageId: randomUUID(),
        timestamp: iso,
      })
      if (body.length + json.length > 490_000) post()
      body += body === '' ? json : `,${json}`
      queued++
      if (queued >= flushAt && !inFlight) post()
    },
    async finish() {
      while (body !== '' || inFlight) {
        if (body !== '' && !inFlight) post()
        await Promise.all(sent)
      }
      await pool.close()
    },
  }
}
