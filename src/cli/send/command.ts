import {
  Client,
  EventwireError,
  MESSAGE_TYPES,
  type DeliveryError,
  type MessageCallback,
  type MessageType,
} from '../../index.js'
import { countArgument, fieldArgument, millisecondsArgument, switchArgument } from '../arguments.js'
import { paint } from '../colors.js'
import { defineCommand, type Command } from '../command-line.js'
import { DEFAULT_DEV_PORT } from '../defaults.js'
import { EXIT, type ExitCode } from '../exit-codes.js'
import type { OptionSpecs, OptionValues } from '../options.js'
import { escapeControl, writeJsonLine } from '../terminal.js'
import { fromOptions, usageError } from '../usage.js'
import { toMessage, unusedOptions } from './message.js'

const OPTIONS = {
  user: { long: 'user', short: 'u', value: 'id', description: 'userId' },
  anonymous: { long: 'anonymous', short: 'a', value: 'id', description: 'anonymousId' },
  event: { long: 'event', short: 'e', value: 'name', description: 'event name (track)' },
  name: { long: 'name', short: 'n', value: 'name', description: 'page or screen name' },
  category: { long: 'category', value: 'category', description: 'page or screen category' },
  group: { long: 'group', short: 'g', value: 'id', description: 'groupId (group)' },
  previous: { long: 'previous', value: 'id', description: 'previousId (alias)' },
  prop: {
    long: 'prop',
    short: 'p',
    value: 'key=value',
    description: 'a property (track, page, screen); key:=json for numbers, booleans, objects; repeatable',
    parse: fieldArgument,
  },
  trait: {
    long: 'trait',
    short: 't',
    value: 'key=value',
    description: 'a trait (identify, group); key:=json as for --prop; repeatable',
    parse: fieldArgument,
  },
  context: {
    long: 'context',
    short: 'c',
    value: 'key=value',
    description: 'a context field; key:=json as for --prop; repeatable',
    parse: fieldArgument,
  },
  integration: {
    long: 'integration',
    short: 'i',
    value: 'name=bool',
    description: 'a destination switch, e.g. Webhooks=false or All=false; repeatable',
    parse: switchArgument,
  },
  messageId: { long: 'message-id', value: 'id', description: 'messageId (default: a random UUID)' },
  timestamp: { long: 'timestamp', value: 'iso', description: 'timestamp (default: now)' },
  endpoint: {
    long: 'endpoint',
    value: 'url',
    description: 'ingest API base URL',
    env: 'EVENTWIRE_ENDPOINT',
    default: `http://127.0.0.1:${DEFAULT_DEV_PORT}`,
  },
  writeKey: { long: 'write-key', short: 'k', value: 'key', description: 'write key', env: 'EVENTWIRE_WRITE_KEY' },
  retries: {
    long: 'retries',
    value: 'n',
    description: 'retries after the first attempt',
    parse: countArgument,
    default: 3,
  },
  timeout: {
    long: 'timeout',
    value: 'ms',
    description: 'time limit of each attempt',
    parse: millisecondsArgument,
    default: 10_000,
  },
  json: { long: 'json', description: 'print the outcome as one JSON object' },
} as const satisfies OptionSpecs

type SendOptions = OptionValues<typeof OPTIONS>

type Outcome = { ok: true; status: number } | { ok: false; error: EventwireError }

function report(
  type: MessageType,
  messageId: unknown,
  endpoint: string,
  outcome: Outcome,
  json: boolean | undefined,
): void {
  if (json) {
    const fields = outcome.ok
      ? { status: outcome.status }
      : {
          code: outcome.error.code,
          error: outcome.error.message,
          status: (outcome.error as Partial<DeliveryError>).status,
        }
    writeJsonLine(process.stdout, { ok: outcome.ok, type, messageId, endpoint, ...fields })
  } else if (outcome.ok) {
    process.stdout.write(
      `${paint('green', '✔')} ${type} ${escapeControl(String(messageId))} sent to ${escapeControl(endpoint)} (HTTP ${outcome.status})\n`,
    )
  } else {
    process.stderr.write(
      `${paint('red', '✘')} ${type} not sent: ${escapeControl(outcome.error.message)} [${outcome.error.code}]\n`,
    )
  }
}

async function send(options: SendOptions, type: MessageType): Promise<ExitCode> {
  const unused = unusedOptions(type, options)
  if (unused.length > 0) usageError(`${type} has no use for --${unused.join(', --')}`)
  const writeKey = options.writeKey
  if (writeKey === undefined || writeKey === '')
    usageError('a write key is needed: --write-key KEY or EVENTWIRE_WRITE_KEY (eventwire dev prints its own)')
  const message = toMessage(type, options)
  const client = fromOptions(
    () =>
      new Client(writeKey, {
        endpoint: options.endpoint,
        flushAt: 1,
        timeout: options.timeout,
        retry: { limit: options.retries },
      }),
  )
  let status = 0
  client.on('sent', (info) => (status = info.status))
  let outcome: Outcome | undefined
  const callback: MessageCallback = (error) => (outcome = error ? { ok: false, error } : { ok: true, status })
  // The client checks the message; each call method takes its own type, and the type is the user's choice here.
  const call = client[type].bind(client) as unknown as (
    input: Record<string, unknown>,
    callback: MessageCallback,
  ) => boolean
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
export const sendCommand: Command = defineCommand({
  name: 'send',
  summary: 'send one call through the client, for smoke tests',
  description:
    'Sends one identify, track, page, screen, group or alias call through the real Client (one batch, retried like any other) and waits for the answer.',
  operand: { name: 'type', description: 'call type', choices: MESSAGE_TYPES },
  options: OPTIONS,
  epilog:
    'Exit codes: 0 sent, 1 not delivered, 2 bad command line or message.\n\nExample:\n  $ eventwire send track --write-key KEY --user u1 --event "Signed Up" --prop plan=pro',
  run: send,
})
