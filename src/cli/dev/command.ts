import { randomBytes } from 'node:crypto'
import { Option, type Command } from 'commander'
import type { WireMessage } from '../../core/messages.js'
import { WebhookDestination, type WebhookEvent } from '../../webhook/node.js'
import { collect, headerArgument } from '../arguments.js'
import { DEFAULT_DEV_PORT } from '../defaults.js'
import { EXIT, type ExitCode } from '../exit-codes.js'
import { closeServer } from '../http.js'
import { addAddressOptions, startServer, type AddressOptions } from '../server-options.js'
import { untilStopped } from '../signals.js'
import { fromOptions } from '../usage.js'
import { writeJsonLine } from '../terminal.js'
import { eventLabel, retryActivity, settledActivity, type DevActivity } from './activity.js'
import { formatActivity } from './format.js'
import { createIngestServer } from './ingest.js'
import { LiveView } from './live-view.js'
import { DevStats } from './stats.js'

interface DevOptions extends AddressOptions {
  writeKey?: string
  webhook: string[]
  header?: Record<string, string>
  secret?: string
  mode: 'any' | 'each'
  json?: boolean
}

/** How long stopping waits for requests in flight; retries still waiting are reported failed. */
const STOP_TIMEOUT_MS = 5_000

/** Where activity goes: JSON lines, the live view on a terminal, or plain log lines. */
function chooseView(options: DevOptions, stats: DevStats): (activity: DevActivity) => void {
  if (options.json) return (activity) => writeJsonLine(process.stdout, activity)
  if (process.stdout.isTTY) {
    const view = new LiveView(stats, process.stdout)
    return (activity) => view.show(activity)
  }
  return (activity) => process.stdout.write(`${formatActivity(activity)}\n`)
}

async function dev(options: DevOptions, command: Command): Promise<ExitCode> {
  const writeKey = options.writeKey || `wk_dev_${randomBytes(12).toString('hex')}`
  const destination = fromOptions(
    command,
    () =>
      new WebhookDestination({
        webhooks: options.webhook.map((url) => ({ url, ...(options.header ? { headers: options.header } : {}) })),
        ...(options.secret === undefined ? {} : { sharedSecret: options.secret }),
        mode: options.mode,
      }),
  )
  const stats = new DevStats(destination.urls)
  const view = chooseView(options, stats)
  const record = (activity: DevActivity) => {
    stats.record(activity)
    view(activity)
  }
  const forwarding = new Set<Promise<void>>()
  const forward = (message: WireMessage) => {
    // parseBatch checked the message with the client's rules, which is what a WebhookEvent promises.
    const done = destination
      .deliver(message as unknown as WebhookEvent)
      .then(
        (result) => record(settledActivity(message, result)),
        (error: unknown) => record({ event: 'unroutable', ...eventLabel(message), reason: error instanceof Error ? error.message : String(error) }),
      )
      .finally(() => forwarding.delete(done))
    forwarding.add(done)
  }
  destination.on('retry', (notice) => record(retryActivity(notice)))
  destination.on('attempt', (notice) => stats.recordAttempt(notice))

  const server = createIngestServer({
    writeKey,
    onBatch: (messages, bytes) => {
      record({ event: 'batch', messages: messages.length, bytes })
      for (const message of messages) forward(message)
    },
    onRejected: (rejection) => record({ event: 'rejected', status: rejection.status, code: rejection.code, reason: rejection.message }),
  })
  const url = await startServer(server, 'dev', options)
  if (url === undefined) {
    await destination.close()
    return EXIT.failed
  }
  record({ event: 'listening', url, batchUrl: `${url}/v1/batch`, writeKey, webhooks: destination.urls, signed: options.secret !== undefined, mode: options.mode })

  await untilStopped()
  await closeServer(server)
  await destination.close({ timeout: STOP_TIMEOUT_MS })
  await Promise.all(forwarding)
  record({ event: 'stopped', ...stats.totals })
  return EXIT.ok
}

/** `eventwire dev`: a local ingest API that forwards every event to webhooks, with a live view. */
export function registerDev(program: Command, exit: (code: ExitCode) => void): void {
  const devCommand = program
    .command('dev')
    .summary('run a local ingest API that forwards events to your webhooks')
    .description(
      'Accepts the client\'s POST /v1/batch (HTTP Basic auth with the write key), checks each batch with the ' +
        'client\'s rules (400 with the reason otherwise), and delivers every event as a signed webhook to each ' +
        '--webhook URL, honouring integrations, with retries. Shows a live view on a terminal, log lines otherwise.',
    )
  addAddressOptions(devCommand, DEFAULT_DEV_PORT)
  devCommand
    .addOption(new Option('-k, --write-key <key>', 'write key clients must send (default: a new random one, printed)').env('EVENTWIRE_WRITE_KEY'))
    .addOption(new Option('-w, --webhook <url>', 'a URL to deliver every event to; repeat for up to 5').argParser(collect).makeOptionMandatory())
    .addOption(new Option('-H, --header <header>', 'a static header for every webhook request, "Name: value"; repeatable').argParser(headerArgument))
    .addOption(new Option('-s, --secret <secret>', 'shared secret: sign every request with X-Signature').env('EVENTWIRE_SECRET'))
    .addOption(new Option('--mode <mode>', 'any: done when one URL accepts (the spec); each: every URL must accept').choices(['any', 'each']).default('any'))
    .option('--json', 'one JSON object per line instead of the live view')
    .addHelpText('after', '\nExample:\n  $ eventwire dev --webhook http://127.0.0.1:8788/hooks --secret s3cret --write-key dev')
    .action(async (options: DevOptions, command: Command) => exit(await dev(options, command)))
}
