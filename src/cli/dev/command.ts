import { randomBytes } from 'node:crypto'
import type { WireMessage } from '../../index.js'
import {
  generateStandardSecret,
  WebhookDestination,
  type WebhookEvent,
  type WebhookSettings,
} from '../../webhook/index.js'
import { collect, headerArgument } from '../arguments.js'
import { corsOriginArgument } from './cors.js'
import { defineCommand, type Command } from '../command-line.js'
import { DEFAULT_DEV_PORT } from '../defaults.js'
import { EXIT, type ExitCode } from '../exit-codes.js'
import { closeServer } from '../http.js'
import type { OptionSpecs, OptionValues } from '../options.js'
import { addressOptions, startServer } from '../server-options.js'
import { untilStopped } from '../signals.js'
import { fromOptions, usageError } from '../usage.js'
import { writeJsonLine } from '../terminal.js'
import { eventLabel, receivedActivity, retryActivity, settledActivity, type DevActivity } from './activity.js'
import { formatActivity } from './format.js'
import { createIngestServer } from './ingest.js'
import { LiveView } from './live-view.js'
import { DevStats } from './stats.js'
import { whyNotForwarded } from './not-forwarded.js'

const OPTIONS = {
  ...addressOptions(DEFAULT_DEV_PORT),
  writeKey: {
    long: 'write-key',
    short: 'k',
    value: 'key',
    description: 'write key clients must send (default: a new random one, printed)',
    env: 'EVENTWIRE_WRITE_KEY',
  },
  webhook: {
    long: 'webhook',
    short: 'w',
    value: 'url',
    description: 'a URL to deliver every event to; repeat for up to 5 (none: only show what arrives)',
    parse: collect,
  },
  header: {
    long: 'header',
    short: 'H',
    value: 'header',
    description: 'a static header for every webhook request, "Name: value"; repeatable',
    parse: headerArgument,
  },
  secret: {
    long: 'secret',
    short: 's',
    value: 'secret',
    description: 'sign every request with this secret, as --signature says (standard: a whsec_ secret)',
    env: 'EVENTWIRE_SECRET',
  },
  signature: {
    long: 'signature',
    value: 'scheme',
    description:
      'x-signature: X-Signature, HMAC-SHA1 (the default); standard: Standard Webhooks; both (standard and both ' +
      'without --secret: a new whsec_ secret, printed)',
    choices: ['x-signature', 'standard', 'both'],
    default: 'x-signature',
  },
  mode: {
    long: 'mode',
    value: 'mode',
    description: 'any: done when one URL accepts (the default); each: every URL must accept',
    choices: ['any', 'each'],
    default: 'any',
  },
  corsOrigin: {
    long: 'cors-origin',
    value: 'origin',
    description: 'a browser origin that may send, e.g. http://localhost:3000; repeatable (default: any, *)',
    parse: corsOriginArgument,
  },
  json: { long: 'json', description: 'one JSON object per line instead of the live view' },
} as const satisfies OptionSpecs

type DevOptions = OptionValues<typeof OPTIONS>

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

/**
 * The signing settings `--secret` and `--signature` call for, and the secret made up when Standard
 * Webhooks was asked for without one (to be printed: receivers need it).
 */
function signingOf(options: DevOptions): { settings: Partial<WebhookSettings>; generated?: string } {
  const scheme = options.signature
  const generated = scheme !== 'x-signature' && options.secret === undefined ? generateStandardSecret() : undefined
  const secret = options.secret ?? generated
  if (secret === undefined) return { settings: {} }
  if (scheme !== 'x-signature' && !secret.startsWith('whsec_')) {
    usageError(
      `--signature ${scheme} signs with a Standard Webhooks secret (whsec_ and base64); leave --secret out and one is made up for you.`,
    )
  }
  const settings: Partial<WebhookSettings> = {
    ...(scheme === 'x-signature' || scheme === 'both' ? { sharedSecret: secret } : {}),
    ...(scheme === 'standard' || scheme === 'both' ? { standardSecret: secret } : {}),
  }
  return generated === undefined ? { settings } : { settings, generated }
}

async function dev(options: DevOptions): Promise<ExitCode> {
  const writeKey = options.writeKey || `wk_dev_${randomBytes(12).toString('hex')}`
  const webhooks = options.webhook ?? []
  const signing = signingOf(options)
  // Without --webhook nothing is forwarded: each event is shown as it arrives.
  const destination =
    webhooks.length === 0
      ? undefined
      : fromOptions(
          () =>
            new WebhookDestination({
              webhooks: webhooks.map((url) => ({ url, ...(options.header ? { headers: options.header } : {}) })),
              ...signing.settings,
              mode: options.mode,
            }),
        )
  const stats = new DevStats(destination?.urls ?? [])
  const view = chooseView(options, stats)
  const record = (activity: DevActivity) => {
    stats.record(activity)
    view(activity)
  }
  const forwarding = new Set<Promise<void>>()
  const forward = (message: WireMessage) => {
    if (destination === undefined) {
      record(receivedActivity(message))
      return
    }
    // checkBatch checked the message with the client's rules, which is what a WebhookEvent promises.
    const done = destination
      .deliver(message as unknown as WebhookEvent)
      .then(
        (result) => record(settledActivity(message, result)),
        (error: unknown) =>
          record({
            event: 'unroutable',
            ...eventLabel(message),
            reason: whyNotForwarded(error),
          }),
      )
      .finally(() => forwarding.delete(done))
    forwarding.add(done)
  }
  destination?.on('retry', (notice) => record(retryActivity(notice)))
  destination?.on('attempt', (notice) => stats.recordAttempt(notice))

  const corsOrigins = options.corsOrigin ?? ['*']
  const server = createIngestServer({
    writeKey,
    corsOrigins,
    onBatch: (messages, bytes) => {
      record({ event: 'batch', messages: messages.length, bytes })
      for (const message of messages) forward(message)
    },
    onRejected: (rejection) =>
      record({ event: 'rejected', status: rejection.status, code: rejection.code, reason: rejection.message }),
  })
  const url = await startServer(server, 'dev', options)
  if (url === undefined) {
    await destination?.close()
    return EXIT.failed
  }
  record({
    event: 'listening',
    url,
    batchUrl: `${url}/v1/batch`,
    writeKey,
    webhooks: destination?.urls ?? [],
    corsOrigins,
    signed: Object.keys(signing.settings).length > 0,
    signature: options.signature,
    ...(signing.generated === undefined ? {} : { generatedSecret: signing.generated }),
    mode: options.mode,
  })

  await untilStopped()
  await closeServer(server)
  await destination?.close({ timeout: STOP_TIMEOUT_MS })
  await Promise.all(forwarding)
  record({ event: 'stopped', ...stats.totals })
  return EXIT.ok
}

/** `eventwire dev`: a local ingest API that forwards every event to webhooks, with a live view. */
export const devCommand: Command = defineCommand({
  name: 'dev',
  summary: 'run a local ingest API that shows events and forwards them to your webhooks',
  description:
    "Accepts the client's POST /v1/batch (the write key as HTTP Basic auth user name, or as writeKey in the " +
    "body), checks each batch with the client's rules (400 with the reason otherwise), and delivers every " +
    'event as a signed webhook to each --webhook URL, honouring integrations, with retries; without --webhook ' +
    'it shows each event as it arrives. Answers CORS, preflights included, for pages of any origin or of each ' +
    '--cors-origin. Shows a live view on a terminal, log lines otherwise.',
  options: OPTIONS,
  epilog:
    'Examples:\n  $ eventwire dev --write-key dev\n' +
    '  $ eventwire dev --webhook http://127.0.0.1:8788/hooks --secret s3cret --write-key dev --cors-origin http://localhost:5173\n' +
    '  $ eventwire dev --webhook http://127.0.0.1:8788/hooks --signature standard',
  run: dev,
})
