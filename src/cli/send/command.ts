import { Argument, Option, type Command } from 'commander'
import pc from 'picocolors'
import { Client } from '../../client/client.js'
import type { MessageCallback } from '../../client/batch.js'
import type { DeliveryError } from '../../client/delivery-error.js'
import { EventwireError } from '../../core/errors/eventwire-error.js'
import { MESSAGE_TYPES, type MessageType } from '../../core/messages.js'
import { countArgument, fieldArgument, millisecondsArgument, switchArgument } from '../arguments.js'
import { DEFAULT_DEV_PORT } from '../defaults.js'
import { EXIT, type ExitCode } from '../exit-codes.js'
import { writeJsonLine } from '../terminal.js'
import { fromOptions, usageError } from '../usage.js'
import { toMessage, unusedOptions, type MessageOptions } from './message.js'

interface SendOptions extends MessageOptions {
  endpoint: string
  writeKey?: string
  retries: number
  timeout: number
  json?: boolean
}

type Outcome = { ok: true; status: number } | { ok: false; error: EventwireError }

function report(type: MessageType, messageId: unknown, endpoint: string, outcome: Outcome, json: boolean | undefined): void {
  if (json) {
    const fields = outcome.ok ? { status: outcome.status } : { code: outcome.error.code, error: outcome.error.message, status: (outcome.error as Partial<DeliveryError>).status }
    writeJsonLine(process.stdout, { ok: outcome.ok, type, messageId, endpoint, ...fields })
  } else if (outcome.ok) {
    process.stdout.write(`${pc.green('✔')} ${type} ${String(messageId)} sent to ${endpoint} (HTTP ${outcome.status})\n`)
  } else {
    process.stderr.write(`${pc.red('✘')} ${type} not sent: ${outcome.error.message} [${outcome.error.code}]\n`)
  }
}

async function send(type: MessageType, options: SendOptions, command: Command): Promise<ExitCode> {
  const unused = unusedOptions(type, options)
  if (unused.length > 0) usageError(command, `${type} has no use for --${unused.join(', --')}`)
  const writeKey = options.writeKey
  if (writeKey === undefined || writeKey === '') usageError(command, 'a write key is needed: --write-key KEY or EVENTWIRE_WRITE_KEY (eventwire dev prints its own)')
  const message = toMessage(type, options)
  const client = fromOptions(command, () => new Client(writeKey, { endpoint: options.endpoint, flushAt: 1, timeout: options.timeout, retry: { limit: options.retries } }))
  let status = 0
  client.on('sent', (info) => (status = info.status))
  let outcome: Outcome | undefined
  const callback: MessageCallback = (error) => (outcome = error ? { ok: false, error } : { ok: true, status })
  // The client checks the message; each call method takes its own type, and the type is the user's choice here.
  const call = client[type].bind(client) as unknown as (input: Record<string, unknown>, callback: MessageCallback) => boolean
  try {
    call(message, callback)
  } catch (error) {
    if (!(error instanceof EventwireError)) throw error
    report(type, message['messageId'], options.endpoint, { ok: false, error }, options.json)
    return EXIT.usage
  }
  await client.close()
  // close() settles every accepted call, so the callback has run.
  const settled = outcome as Outcome
  report(type, message['messageId'], options.endpoint, settled, options.json)
  return settled.ok ? EXIT.ok : EXIT.failed
}

/** `eventwire send`: one call from the shell, through the real client. */
export function registerSend(program: Command, exit: (code: ExitCode) => void): void {
  program
    .command('send')
    .summary('send one call through the client, for smoke tests')
    .description('Sends one identify, track, page, screen, group or alias call through the real Client (one batch, retried like any other) and waits for the answer.')
    .addArgument(new Argument('<type>', 'call type').choices(MESSAGE_TYPES))
    .option('-u, --user <id>', 'userId')
    .option('-a, --anonymous <id>', 'anonymousId')
    .option('-e, --event <name>', 'event name (track)')
    .option('-n, --name <name>', 'page or screen name')
    .option('--category <category>', 'page or screen category')
    .option('-g, --group <id>', 'groupId (group)')
    .option('--previous <id>', 'previousId (alias)')
    .option('-p, --prop <key=value>', 'a property (track, page, screen); key:=json for numbers, booleans, objects', fieldArgument)
    .option('-t, --trait <key=value>', 'a trait (identify, group); key:=json as for --prop', fieldArgument)
    .option('-c, --context <key=value>', 'a context field; key:=json as for --prop', fieldArgument)
    .option('-i, --integration <name=bool>', 'a destination switch, e.g. Webhooks=false or All=false', switchArgument)
    .option('--message-id <id>', 'messageId (default: a random UUID)')
    .option('--timestamp <iso>', 'timestamp (default: now)')
    .addOption(new Option('--endpoint <url>', 'ingest API base URL').env('EVENTWIRE_ENDPOINT').default(`http://127.0.0.1:${DEFAULT_DEV_PORT}`))
    .addOption(new Option('-k, --write-key <key>', 'write key').env('EVENTWIRE_WRITE_KEY'))
    .addOption(new Option('--retries <n>', 'retries after the first attempt').argParser(countArgument).default(3))
    .addOption(new Option('--timeout <ms>', 'time limit of each attempt').argParser(millisecondsArgument).default(10_000))
    .option('--json', 'print the outcome as one JSON object')
    .addHelpText('after', '\nExit codes: 0 sent, 1 not delivered, 2 bad command line or message.\n\nExample:\n  $ eventwire send track --write-key KEY --user u1 --event "Signed Up" --prop plan=pro')
    .action(async (type: MessageType, options: SendOptions, command: Command) => exit(await send(type, options, command)))
}
