// A strict CommonJS project (TypeScript compiles these imports to require calls).
import eventwire = require('eventwire')
import webhook = require('eventwire/webhook')
import node = require('eventwire/webhook/node')

const client = new eventwire.Client('k', { endpoint: process.env['ANALYTICS_ENDPOINT'] })
client.identify({ userId: 'u1', traits: { plan: 'pro' } })
const destination = new webhook.WebhookDestination({
  webhooks: [{ url: 'https://x.test' }],
  transport: node.createHttp1Transport(),
})
export = { pending: client.pending satisfies number, destination }
