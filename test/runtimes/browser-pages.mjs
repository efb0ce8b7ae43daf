// Chromium as a browser user's site runs the Client: pages on one origin sending to an ingest API
// on another (so CORS applies), navigated away from with more queued than keepalive may carry, and
// the installed `eventwire dev` as the ingest API a developer points their page at.
//
// Every server listens on 127.0.0.1; the site and the ingest API are two ports, two origins.
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { gunzipSync } from 'node:zlib'
import { until } from './until.mjs'

/** How many results {@link browserPageChecks} returns. */
export const BROWSER_PAGE_CHECKS = 8

/** Events queued by the page that is left: some 600 bytes each, 150 KB in all (the keepalive quota is 64 KiB). */
const LEAVING_EVENTS = 250
const WRITE_KEY = 'page-key'

/**
 * An ingest API like a production one: CORS for any origin, the key in the header or the body,
 * gzip bodies; counts everything. Runs named `held-*` get no answer until `release(run)`: their
 * requests stay in flight, as on a slow network. Runs named `down-*` answer 503 (an outage), and
 * `down-wait-*` with `Retry-After: 3600`, exposed to the page's script as CORS requires.
 */
async function startIngest() {
  const requests = []
  const held = new Map()
  const server = createServer((request, response) => {
    const chunks = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      const run = new URL(request.url, 'http://ingest').pathname.split('/')[1]
      const cors = { 'access-control-allow-origin': '*' }
      if (request.method === 'OPTIONS') {
        requests.push({ run, method: 'OPTIONS' })
        response
          .writeHead(204, {
            ...cors,
            'access-control-allow-methods': 'POST',
            'access-control-allow-headers': 'authorization, content-type, content-encoding',
          })
          .end()
        return
      }
      const raw = Buffer.concat(chunks)
      const gzip = request.headers['content-encoding'] === 'gzip'
      const body = JSON.parse((gzip ? gunzipSync(raw) : raw).toString('utf8'))
      requests.push({
        run,
        method: request.method,
        contentType: request.headers['content-type'],
        auth: request.headers.authorization,
        writeKey: body.writeKey,
        gzip,
        bytes: raw.length,
        ids: body.batch.map((message) => message.messageId),
      })
      const answer = () =>
        response.writeHead(200, { ...cors, 'content-type': 'application/json' }).end('{"success":true}')
      if (run.startsWith('held-')) held.set(run, [...(held.get(run) ?? []), answer])
      else if (run.startsWith('down-'))
        response
          .writeHead(503, {
            ...cors,
            'access-control-expose-headers': 'retry-after',
            ...(run.startsWith('down-wait-') ? { 'retry-after': '3600' } : {}),
          })
          .end()
      else answer()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const of = (run) => requests.filter((request) => request.run === run)
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    preflights: (run) => of(run).filter((request) => request.method === 'OPTIONS').length,
    posts: (run) => of(run).filter((request) => request.method === 'POST'),
    unique: (run) => new Set(of(run).flatMap((request) => request.ids ?? [])).size,
    release: (run) => {
      for (const answer of held.get(run) ?? []) answer()
      held.delete(run)
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}

/** The site: pages whose inline script drives the bundled Client (`globalThis.eventwire`). */
async function startSite(bundle) {
  const reports = new Map()
  const server = createServer((request, response) => {
    const chunks = []
    request.on('data', (chunk) => chunks.push(chunk))
    request.on('end', () => {
      const url = new URL(request.url, 'http://site')
      if (url.pathname === '/bundle.js') {
        response.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle)
        return
      }
      if (url.pathname === '/report') {
        reports.set(url.searchParams.get('name'), JSON.parse(Buffer.concat(chunks).toString('utf8')))
        response.writeHead(204).end()
        return
      }
      const script = url.searchParams.get('script') ?? ''
      response
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<!doctype html><title>loading</title><script src="/bundle.js"></script><script type="module">${script}</script>`,
        )
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    reports,
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}

/**
 * A page that queues LEAVING_EVENTS and is then hidden (a tab switched away from, an app sent to
 * the background: the page may be killed without another event). Headless Chromium keeps its
 * pages visible, so the page says it is hidden itself.
 */
const hiddenScript = (endpoint, options) => `
  // Counts the requests the client starts (it calls the global fetch for each).
  const realFetch = window.fetch
  window.started = 0
  window.fetch = (...args) => {
    window.started++
    return realFetch(...args)
  }
  const client = new eventwire.Client(${JSON.stringify(WRITE_KEY)}, { endpoint: ${JSON.stringify(endpoint)}, flushAt: 10000, flushAfter: 600000, ...${JSON.stringify(options)} })
  const pad = 'x'.repeat(500)
  for (let index = 0; index < ${LEAVING_EVENTS}; index++) client.track({ userId: 'u1', event: 'Viewed', properties: { index, pad } })
  Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true })
  document.dispatchEvent(new Event('visibilitychange', { bubbles: true }))
  // Uncompressed bodies start at once (a compressed one once it is compressed): a task later,
  // every request an uncompressed run can start has started.
  await new Promise((resolve) => setTimeout(resolve, 0))
  document.title = 'hidden'
`

/**
 * A page that tracks as it is left, as apps do: in a `pagehide` listener added after the client's,
 * and in a `visibilitychange` one (which browsers fire after `pagehide`). 2 KB each: over the
 * compression threshold.
 */
const lateScript = (endpoint, options) => `
  const client = new eventwire.Client(${JSON.stringify(WRITE_KEY)}, { endpoint: ${JSON.stringify(endpoint)}, ...${JSON.stringify(options)} })
  const pad = 'x'.repeat(2000)
  addEventListener('pagehide', () => client.track({ userId: 'u1', event: 'Page Left', messageId: 'late-pagehide', properties: { pad } }))
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') client.track({ userId: 'u1', event: 'Page Hidden', messageId: 'late-hidden', properties: { pad } })
  })
  document.title = 'ready'
`

/**
 * A page whose endpoint is down while the user switches tabs: one event, whose first attempt gets
 * a 503; then 12 switches away and back, 60 ms apart. Retries are an hour apart (or the server asks
 * for an hour), so every request after the first is one that hiding the page caused. The title
 * ends as the number of requests the client started.
 */
const tabSwitchScript = (endpoint, retry) => `
  const realFetch = window.fetch
  window.started = 0
  window.answered = 0
  window.fetch = (...args) => {
    window.started++
    return realFetch(...args).finally(() => window.answered++)
  }
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
  const client = new eventwire.Client(${JSON.stringify(WRITE_KEY)}, { endpoint: ${JSON.stringify(endpoint)}, retry: ${JSON.stringify(retry)} })
  client.track({ userId: 'u1', event: 'Viewed' })
  void client.flush()
  // The first attempt's 503 is in; a task later the batch waits for its retry.
  while (window.answered === 0) await sleep(10)
  await sleep(0)
  // As a user does: away and back, 60 ms apart (an early attempt on loopback ends well within that).
  for (let toggle = 0; toggle < 12; toggle++) {
    for (const state of ['hidden', 'visible']) {
      Object.defineProperty(document, 'visibilityState', { value: state, configurable: true })
      document.dispatchEvent(new Event('visibilitychange', { bubbles: true }))
      await sleep(60)
    }
  }
  // Any attempt the last switch caused has started a task after it.
  await sleep(0)
  document.title = 'requests ' + window.started
`

/**
 * A page left into the back-forward cache and restored: 250 events with callbacks, a pagehide and
 * a pageshow that say so (\`persisted\`), as the browser fires them. The title ends as how many
 * callbacks ran once everything is sent.
 */
const bfcacheScript = (endpoint) => `
  const client = new eventwire.Client(${JSON.stringify(WRITE_KEY)}, { endpoint: ${JSON.stringify(endpoint)}, flushAt: 10000, flushAfter: 600000 })
  const pad = 'x'.repeat(500)
  const heard = new Set()
  for (let index = 0; index < ${LEAVING_EVENTS}; index++)
    client.track({ userId: 'u1', event: 'Viewed', messageId: 'bf-' + index, properties: { index, pad } }, (error) => {
      if (!error) heard.add(index)
    })
  window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }))
  window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }))
  await client.flush()
  document.title = 'callbacks ' + heard.size
`

/** The script of the page that is left: queue LEAVING_EVENTS, then say so in the title. */
const leavingScript = (endpoint, options) => `
  const client = new eventwire.Client(${JSON.stringify(WRITE_KEY)}, { endpoint: ${JSON.stringify(endpoint)}, flushAt: 10000, flushAfter: 600000, ...${JSON.stringify(options)} })
  const pad = 'x'.repeat(500)
  for (let index = 0; index < ${LEAVING_EVENTS}; index++) client.track({ userId: 'u1', event: 'Viewed', properties: { index, pad } })
  document.title = 'queued'
`

/**
 * The next page of the site: counts what the last one kept (under a key of its own, see
 * src/client/page-store.ts), then starts its own client (which sends it).
 */
const nextScript = (endpoint, run) => `
  const prefix = ${JSON.stringify(`eventwire:unsent:${WRITE_KEY}@${endpoint}/v1/batch:`)}
  let kept = 0
  for (let index = 0; index < localStorage.length; index++) {
    const key = localStorage.key(index)
    if (key.startsWith(prefix)) kept += JSON.parse(localStorage.getItem(key)).length
  }
  await fetch('/report?name=${run}', { method: 'POST', body: JSON.stringify({ kept }) })
  new eventwire.Client(${JSON.stringify(WRITE_KEY)}, { endpoint: ${JSON.stringify(endpoint)} })
  // Sent after the last page's keepalive requests: once it is in, they are too.
  const marker = new eventwire.Client(${JSON.stringify(WRITE_KEY)}, { endpoint: ${JSON.stringify(`${endpoint}-marker`)} })
  marker.track({ userId: 'u1', event: 'Marker' })
  await marker.flush()
  document.title = 'next'
`

/**
 * Runs the browser page checks in Chromium. `bundle` is the installed package's Client bundled as
 * an IIFE that sets `globalThis.eventwire`; `bin` is the installed `eventwire` command.
 * Returns conformance-style results, each with the numbers it saw in `detail`.
 */
export async function browserPageChecks({ browser, bundle, bin }) {
  const ingest = await startIngest()
  const site = await startSite(bundle)
  const results = []
  const check = async (name, body) => {
    try {
      const detail = await body()
      results.push({ name, ok: true, ...(detail ? { detail } : {}) })
    } catch (error) {
      results.push({ name, ok: false, error: error.message })
    }
  }
  const page = await browser.newPage()
  const open = (script) => page.goto(`${site.base}/?${new URLSearchParams({ script })}`)
  const sendFive = (run, options) => `
    const client = new eventwire.Client(${JSON.stringify(WRITE_KEY)}, { endpoint: ${JSON.stringify(`${ingest.base}/${run}`)}, ...${JSON.stringify(options)} })
    for (let index = 0; index < 5; index++) client.track({ userId: 'u1', event: 'Clicked', properties: { index } })
    await client.flush()
    document.title = 'flushed'
  `
  try {
    await check('browser: the Client sends to another origin without a CORS preflight (key in the body)', async () => {
      await open(sendFive('simple', {}))
      await page.waitForFunction(() => document.title === 'flushed')
      const posts = ingest.posts('simple')
      if (ingest.preflights('simple') !== 0) throw new Error(`${ingest.preflights('simple')} preflight(s) sent`)
      if (ingest.unique('simple') !== 5) throw new Error(`${ingest.unique('simple')} of 5 events arrived`)
      const [post] = posts
      if (post.auth !== undefined || post.writeKey !== WRITE_KEY || !post.contentType.startsWith('text/plain'))
        throw new Error(`sent ${JSON.stringify(post)}`)
      await open(sendFive('header', { writeKeyIn: 'header' }))
      await page.waitForFunction(() => document.title === 'flushed')
      return `key in the body: ${posts.length} POST, 0 OPTIONS; writeKeyIn 'header': ${ingest.posts('header').length} POST, ${ingest.preflights('header')} OPTIONS`
    })

    for (const [run, options] of [
      ['exit', {}],
      ['exit-nostore', { storeOnPageHide: false }],
    ]) {
      const endpoint = `${ingest.base}/${run}`
      const stored = run === 'exit'
      const name = stored
        ? `browser: a page leaving with ${LEAVING_EVENTS} events (150 KB) queued loses none: keepalive within 64 KiB, the rest sent by the next page`
        : 'browser: storeOnPageHide: false sends only what the keepalive budget carries'
      await check(name, async () => {
        await open(leavingScript(endpoint, options))
        await page.waitForFunction(() => document.title === 'queued')
        if (ingest.posts(run).length !== 0) throw new Error('sent before the page was left')
        await open(nextScript(endpoint, run))
        await page.waitForFunction(() => document.title === 'next')
        const { kept } = site.reports.get(run)
        if (stored) {
          await until(() => ingest.unique(run) === LEAVING_EVENTS, `${LEAVING_EVENTS} events`)
          return `${LEAVING_EVENTS - kept} sent with keepalive as the page left, ${kept} kept and sent by the next page, ${ingest.posts(run).length} requests, ${ingest.unique(run)} of ${LEAVING_EVENTS} arrived`
        }
        // What the budget carried arrives, and nothing else can.
        await until(() => ingest.unique(run) > 0, 'the keepalive requests')
        await until(() => ingest.unique(`${run}-marker`) === 1, 'the next page to send')
        if (kept !== 0) throw new Error(`${kept} kept with storeOnPageHide: false`)
        const arrived = ingest.unique(run)
        if (arrived >= LEAVING_EVENTS) throw new Error(`all ${arrived} arrived: the budget did not bind`)
        return `${arrived} of ${LEAVING_EVENTS} arrived (keepalive alone)`
      })
    }

    await check(
      `browser: a hidden page with compression 'gzip' sends all ${LEAVING_EVENTS} queued events (150 KB) at once within the 64 KiB keepalive budget`,
      async () => {
        // Answers held: what is in flight is what the budget let go, none of it freed by an answer.
        const sent = {}
        for (const [run, options] of [
          ['held-gzip', { compression: 'gzip' }],
          ['held-plain', {}],
        ]) {
          await open(hiddenScript(`${ingest.base}/${run}`, options))
          await page.waitForFunction(() => document.title === 'hidden')
          // In flight means arrived here: the held runs answer nothing. Compressed, every event
          // should go; uncompressed, what the page started.
          const started = await page.evaluate(() => window.started)
          await until(
            () =>
              ingest.unique(run) === LEAVING_EVENTS || (!options.compression && ingest.posts(run).length === started),
            `the ${run} requests`,
          )
          const posts = ingest.posts(run)
          sent[run] = {
            events: ingest.unique(run),
            requests: posts.length,
            bytes: posts.reduce((total, post) => total + post.bytes, 0),
            gzip: posts.every((post) => post.gzip),
          }
          ingest.release(run)
        }
        const zipped = sent['held-gzip']
        const plain = sent['held-plain']
        if (zipped.events !== LEAVING_EVENTS || !zipped.gzip || zipped.bytes > 65_536)
          throw new Error(`with gzip: ${JSON.stringify(zipped)}`)
        if (plain.events >= LEAVING_EVENTS || plain.gzip) throw new Error(`without: ${JSON.stringify(plain)}`)
        return `in flight at once: ${zipped.events} events in ${zipped.requests} gzip requests (${zipped.bytes} bytes); without compression ${plain.events} events in ${plain.requests} requests (${plain.bytes} bytes)`
      },
    )

    await check(
      'browser: calls made as a page is left (pagehide, then hidden) arrive, with or without compression',
      async () => {
        const seen = []
        for (const [run, options] of [
          ['late-gzip', { compression: 'gzip' }],
          ['late-plain', {}],
        ]) {
          await open(lateScript(`${ingest.base}/${run}`, options))
          await page.waitForFunction(() => document.title === 'ready')
          // A page of the site without a client: what arrives was sent by the page that was left.
          await open('document.title = "next"')
          await until(() => ingest.unique(run) === 2, `both late events of ${run}`)
          seen.push(
            `${run}: ${ingest.posts(run).length} request(s), ${ingest.posts(run).some((post) => post.gzip) ? 'gzip' : 'JSON'}`,
          )
        }
        return seen.join('; ')
      },
    )

    await check(
      'browser: switching tabs 12 times during an outage spends one early attempt, and none against a Retry-After',
      async () => {
        const started = {}
        for (const [run, retry, expected] of [
          ['down-tabs', { baseDelay: 3_600_000, maxDelay: 3_600_000 }, 2],
          ['down-wait-tabs', { baseDelay: 1, maxRetryAfter: 3_600_000 }, 1],
        ]) {
          await open(tabSwitchScript(`${ingest.base}/${run}`, retry))
          await page.waitForFunction(() => document.title.startsWith('requests '))
          started[run] = Number((await page.title()).slice('requests '.length))
          if (started[run] !== expected) throw new Error(`${run}: ${started[run]} requests, expected ${expected}`)
        }
        return `backoff: ${started['down-tabs']} requests (the first and one early); Retry-After: ${started['down-wait-tabs']} request`
      },
    )

    await check(
      'browser: after a back-forward cache round trip, every callback of the kept and re-sent events runs',
      async () => {
        await open(bfcacheScript(`${ingest.base}/bfcache`))
        await page.waitForFunction(() => document.title.startsWith('callbacks '))
        const heard = Number((await page.title()).slice('callbacks '.length))
        await until(() => ingest.unique('bfcache') === LEAVING_EVENTS, `${LEAVING_EVENTS} events`)
        if (heard !== LEAVING_EVENTS) throw new Error(`${heard} of ${LEAVING_EVENTS} callbacks ran`)
        return `${heard} of ${LEAVING_EVENTS} callbacks ran, ${ingest.unique('bfcache')} events arrived`
      },
    )

    await check('browser: a page sends to `eventwire dev` (installed bin) across origins', async () => {
      const dev = spawn(bin, ['dev', '--port', '0', '--write-key', WRITE_KEY, '--json'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1' },
      })
      try {
        const records = []
        let buffered = ''
        dev.stdout.on('data', (chunk) => {
          buffered += chunk
          const lines = buffered.split('\n')
          buffered = lines.pop()
          for (const line of lines) if (line.startsWith('{')) records.push(JSON.parse(line))
        })
        await until(() => records.some((record) => record.event === 'listening'), 'eventwire dev to listen')
        const { url } = records.find((record) => record.event === 'listening')
        for (const writeKeyIn of ['body', 'header']) {
          await page.goto(
            `${site.base}/?${new URLSearchParams({
              script: `
                const client = new eventwire.Client(${JSON.stringify(WRITE_KEY)}, { endpoint: ${JSON.stringify(url)}, writeKeyIn: '${writeKeyIn}' })
                const errors = []
                client.on('error', (error) => errors.push(error.message))
                client.track({ userId: 'u1', event: 'From ${writeKeyIn}', messageId: 'dev-${writeKeyIn}' })
                await client.flush()
                document.title = errors.length === 0 ? 'flushed' : 'failed: ' + errors.join('; ')
              `,
            })}`,
          )
          await page.waitForFunction(() => document.title !== 'loading')
          const title = await page.title()
          if (title !== 'flushed') throw new Error(`writeKeyIn '${writeKeyIn}': ${title}`)
          await until(
            () => records.some((record) => record.event === 'received' && record.eventId === `dev-${writeKeyIn}`),
            `dev to show the event sent with the key in the ${writeKeyIn}`,
          )
        }
        return 'key in the body (no preflight) and in the header (preflight answered)'
      } finally {
        dev.kill('SIGINT')
      }
    })
  } finally {
    await page.close()
    await Promise.all([ingest.close(), site.close()])
  }
  return results
}
