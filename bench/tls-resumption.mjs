// TLS handshakes per 1,000 webhook deliveries to one HTTPS receiver that gets them in bursts 5 s
// apart: longer than a connection stays idle (4 s at most), so each burst needs new connections.
// Prints one JSON line: full and resumed handshakes, and the sender's CPU per delivery.
//
//   npm run build && node bench/tls-resumption.mjs
//   node bench/tls-resumption.mjs '{"bursts":10,"perBurst":100,"gapMs":5000}'
//
// The receiver runs here; the sender is a child process with the public WebhookDestination, told
// to trust the test certificate through NODE_EXTRA_CA_CERTS. EVENTWIRE_WEBHOOK_ENTRY points the
// sender at another build (a checkout of an earlier commit) for a before/after.
import { fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:https'
import { fileURLToPath } from 'node:url'

const config = { bursts: 10, perBurst: 100, gapMs: 5_000, ...JSON.parse(process.argv[2] ?? '{}') }

if (process.env.TLS_BENCH_SENDER === undefined) {
  const fixture = (name) => fileURLToPath(new URL(`../test/fixtures/tls/${name}`, import.meta.url))
  const handshakes = { full: 0, resumed: 0 }
  // node:https answers; the handshakes are counted as its TLS connections come.
  const server = createServer(
    { key: readFileSync(fixture('self-signed.key')), cert: readFileSync(fixture('self-signed.pem')) },
    (request, response) => request.resume().on('end', () => response.end()),
  )
  server.keepAliveTimeout = 60_000
  server.on('secureConnection', (socket) => {
    if (socket.isSessionReused()) handshakes.resumed++
    else handshakes.full++
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(config)], {
    env: {
      ...process.env,
      TLS_BENCH_SENDER: `https://127.0.0.1:${server.address().port}/in`,
      NODE_EXTRA_CA_CERTS: fixture('self-signed.pem'),
    },
  })
  const sent = await new Promise((resolve, reject) => {
    child.once('message', resolve)
    child.once('exit', (code) => reject(new Error(`the sender exited ${code}`)))
  })
  server.close()
  const deliveries = sent.delivered
  console.log(
    JSON.stringify({
      ...config,
      ...sent,
      fullHandshakes: handshakes.full,
      resumedHandshakes: handshakes.resumed,
      fullPer1000: Math.round((handshakes.full / deliveries) * 1000 * 10) / 10,
    }),
  )
} else {
  const { WebhookDestination } = await import(process.env.EVENTWIRE_WEBHOOK_ENTRY ?? 'eventwire/webhook')
  const destination = new WebhookDestination({ webhooks: [{ url: process.env.TLS_BENCH_SENDER }], sharedSecret: 's' })
  let delivered = 0
  const cpuStart = process.cpuUsage()
  for (let burst = 0; burst < config.bursts; burst++) {
    if (burst > 0) await new Promise((resolve) => setTimeout(resolve, config.gapMs))
    const results = await Promise.all(
      Array.from({ length: config.perBurst }, (_, n) =>
        destination.deliver({ type: 'track', userId: `u${n}`, event: 'Burst', messageId: `b${burst}-${n}` }),
      ),
    )
    delivered += results.filter((result) => result.status === 'delivered').length
  }
  const cpu = process.cpuUsage(cpuStart)
  await destination.close()
  process.send({ delivered, cpuUsPerDelivery: Math.round((cpu.user + cpu.system) / delivered) })
  process.disconnect()
}
