import { millisecondsArgument, rateArgument } from '../arguments.js'
import { defineCommand, type Command } from '../command-line.js'
import { DEFAULT_LISTEN_PORT } from '../defaults.js'
import { EXIT, type ExitCode } from '../exit-codes.js'
import { closeServer } from '../http.js'
import type { OptionSpecs, OptionValues } from '../options.js'
import { addressOptions, startServer } from '../server-options.js'
import { untilStopped } from '../signals.js'
import { writeJsonLine } from '../terminal.js'
import { formatRequest, formatSummary } from './format.js'
import { createReceiver, schemeOf, type ReceivedRequest, type SignatureCheck } from './receiver.js'
import { OptionsError, verifyWebhook, type SignatureScheme } from '../../webhook/index.js'
import { usageError } from '../usage.js'

const OPTIONS = {
  ...addressOptions(DEFAULT_LISTEN_PORT),
  secret: {
    long: 'secret',
    short: 's',
    value: 'secret',
    description: 'secret to verify signatures with: a whsec_ secret checks Standard Webhooks, another X-Signature',
    env: 'EVENTWIRE_SECRET',
  },
  signature: {
    long: 'signature',
    value: 'scheme',
    description: 'check x-signature or standard (default: from the secret, as above)',
    choices: ['x-signature', 'standard'],
  },
  failRate: {
    long: 'fail-rate',
    value: 'rate',
    description: 'share of valid requests answered 500, from 0 to 1',
    parse: rateArgument,
    default: 0,
  },
  delay: {
    long: 'delay',
    value: 'ms',
    description: 'wait this long before answering (the sender times out at 5000)',
    parse: millisecondsArgument,
    default: 0,
  },
  json: { long: 'json', description: 'one JSON object per line instead of pretty output' },
} as const satisfies OptionSpecs

type ListenOptions = OptionValues<typeof OPTIONS>

/** Asks `verifyWebhook` itself whether it can check with `secret`, by one dry run. */
async function checkSecret(secret: string, scheme: SignatureScheme): Promise<void> {
  try {
    await verifyWebhook({ headers: {}, body: '' }, { secrets: secret, scheme })
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error
    usageError(`--secret: ${error.message.replace(/^Invalid option `secrets`: /, '')}`)
  }
}

async function listen(options: ListenOptions): Promise<ExitCode> {
  const counts: Record<SignatureCheck, number> = { verified: 0, forged: 0, missing: 0, stale: 0, unchecked: 0 }
  const answered: Record<string, number> = {}
  const show = (request: ReceivedRequest) => {
    counts[request.signature]++
    answered[request.status] = (answered[request.status] ?? 0) + 1
    if (options.json) writeJsonLine(process.stdout, request)
    else process.stdout.write(`${formatRequest(request, process.stdout.columns ?? 120)}\n`)
  }
  const receiving = {
    secret: options.secret,
    scheme: options.signature,
    failRate: options.failRate,
    delay: options.delay,
  }
  // A secret that cannot serve the scheme is the user's mistake: said now (exit 2), not per request.
  if (options.secret !== undefined) await checkSecret(options.secret, schemeOf(receiving))
  const server = createReceiver(receiving, show)
  const url = await startServer(server, 'listen', options)
  if (url === undefined) return EXIT.failed
  const scheme = schemeOf(receiving) === 'standard' ? 'Standard Webhooks signatures' : 'X-Signature'
  const check = options.secret === undefined ? 'not checked (no --secret)' : 'checked with the given secret'
  if (options.json)
    writeJsonLine(process.stdout, {
      event: 'listening',
      url,
      signatureCheck: options.secret !== undefined,
      scheme: schemeOf(receiving),
      failRate: options.failRate,
      delay: options.delay,
    })
  else
    process.stdout.write(
      `eventwire listen: receiving webhooks on ${url} (any path); ${scheme} ${check}. Ctrl+C stops.\n`,
    )

  await untilStopped()
  await closeServer(server)
  if (options.json) writeJsonLine(process.stdout, { event: 'stopped', ...counts, answered })
  else process.stdout.write(`${formatSummary(counts, answered)}\n`)
  return EXIT.ok
}

/** `eventwire listen`: a local webhook receiver that verifies and pretty-prints what arrives. */
export const listenCommand: Command = defineCommand({
  name: 'listen',
  summary: 'receive webhooks locally: verify their signatures and print each event',
  description:
    'Receives webhook POSTs on any path, verifies X-Signature (HMAC-SHA1 of the body) or Standard Webhooks ' +
    'signatures (with a whsec_ secret, or --signature standard; timestamps over 5 minutes off are stale) when ' +
    'given --secret, and prints each event with a verified/forged mark. Forged, unsigned or stale requests are ' +
    'answered 401 when a secret is set. --fail-rate and --delay rehearse retries and timeouts.',
  options: OPTIONS,
  epilog:
    'Examples:\n  $ eventwire listen --port 8788 --secret s3cret --fail-rate 0.2\n' +
    '  $ eventwire listen --port 8788 --secret whsec_... (the secret eventwire dev --signature standard printed)',
  run: listen,
})
