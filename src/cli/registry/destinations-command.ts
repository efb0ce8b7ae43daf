import { readFileSync } from 'node:fs'
import type {
  Destination,
  LoggedAttempt,
  ReplayResult,
  StoredDestination,
  WebhookQueue,
} from '../../webhook/bullmq/index.js'
import { countArgument, timeArgument } from '../arguments.js'
import { defineCommand, type Command } from '../command-line.js'
import { EXIT, type ExitCode } from '../exit-codes.js'
import type { OptionSpecs, OptionValues } from '../options.js'
import { escapeControl, writeJsonLine } from '../terminal.js'
import { usageError } from '../usage.js'
import { absent, onQueue, REDIS_OPTIONS } from './connect.js'
import { printDeleted, printListed, printRecord } from './listing.js'

const ACTIONS = ['list', 'show', 'attempts', 'replay', 'set', 'disable', 'enable', 'delete'] as const
type Action = (typeof ACTIONS)[number]

/** Collects each use of a repeatable option. */
const repeated = (text: string, previous: string[] | undefined): string[] => [...(previous ?? []), text]

const OPTIONS = {
  ...REDIS_OPTIONS,
  file: {
    long: 'file',
    short: 'f',
    value: 'path',
    description: "set: the destination as JSON (as queue.destinations.set() takes it), '-' for standard input",
  },
  url: { long: 'url', value: 'url', description: 'set: a receiving URL; repeatable, up to 5', parse: repeated },
  secret: {
    long: 'secret',
    value: 'secret',
    description: 'set: an X-Signature secret; repeatable for a rotation',
    parse: repeated,
  },
  standardSecret: {
    long: 'standard-secret',
    value: 'whsec_…',
    description: 'set: a Standard Webhooks secret (whsec_…); repeatable for a rotation',
    parse: repeated,
  },
  mode: { long: 'mode', value: 'mode', description: "set: 'any' or 'each'", choices: ['any', 'each'] },
  ifVersion: {
    long: 'if-version',
    value: 'n',
    description: "set: write only over this version (0: only a new destination); a --file's own version does the same",
    parse: (text: string) => countArgument(text),
  },
  showSecrets: { long: 'show-secrets', description: 'list, show: print secrets and sensitive header values' },
  force: { long: 'force', description: 'delete: even while sources send to it (their events to it are then dropped)' },
  event: { long: 'event', short: 'e', value: 'id', description: "attempts: only this event's (its messageId)" },
  limit: {
    long: 'limit',
    value: 'n',
    description: 'attempts: at most this many, newest first (100 by default, up to 10000)',
    parse: countArgument,
  },
  since: {
    long: 'since',
    value: 'time',
    description:
      'attempts, replay: from this time on: ISO 8601 with its zone (2026-11-28T14:00:00Z), epoch ms, or how long ago (90m, 2h, 1d)',
    parse: (text: string) => timeArgument(text),
  },
  until: {
    long: 'until',
    value: 'time',
    description: 'attempts, replay: up to this time, in the same forms (now by default)',
    parse: (text: string) => timeArgument(text),
  },
} as const satisfies OptionSpecs

type Options = OptionValues<typeof OPTIONS>

/**
 * A `whsec_` secret is a Standard Webhooks one: given as the X-Signature secret (`--secret`, or
 * `sharedSecret` in a file), it signs with HMAC-SHA1 over those characters, and a receiver that
 * verifies Standard Webhooks refuses every request. Said, not refused: the string is a valid key.
 */
function warnStandardAsShared(stored: StoredDestination): void {
  const shared = stored.sharedSecret === undefined ? [] : [stored.sharedSecret].flat()
  if (!shared.some((secret) => secret.startsWith('whsec_'))) return
  process.stderr.write(
    `warning: ${escapeControl(stored.id)} has a whsec_ secret as its X-Signature secret (--secret, sharedSecret). That is a Standard Webhooks secret: give it with --standard-secret (standardSecret) for receivers that verify Standard Webhooks.\n`,
  )
}

/** What a replay did, in one line: what it stored, and why it left any out. */
function replayLine(id: string, result: ReplayResult): string {
  const left = [
    result.inFlight > 0 ? `${result.inFlight} already waiting or being delivered` : '',
    result.deadLetters > 0 ? `${result.deadLetters} dead letters (re-drive them instead)` : '',
    result.disabled > 0 ? `${result.disabled} not sent: the destination is disabled (enable it, then replay)` : '',
  ].filter((part) => part !== '')
  const kept =
    result.found === 0
      ? ': nothing kept for that window (workers keep delivered events only with their keepSent option)'
      : ''
  return escapeControl(
    `${id}: ${result.queued} of ${result.found} events queued again${kept}${left.length > 0 ? `; ${left.join('; ')}` : ''}`,
  )
}

/** Header names whose values are credentials: masked unless `--show-secrets`. */
const SENSITIVE = /auth|token|secret|key|password|cookie|signature/i

/** A destination as printed: secrets and credential headers as `***`, unless asked for. */
function shown(destination: StoredDestination, showSecrets: boolean | undefined): StoredDestination {
  if (showSecrets) return destination
  const mask = (secrets: string | readonly string[] | undefined) =>
    secrets === undefined ? undefined : Array.isArray(secrets) ? secrets.map(() => '***') : '***'
  const { sharedSecret, standardSecret, ...rest } = destination
  return {
    ...rest,
    webhooks: destination.webhooks.map(({ url, headers }) =>
      headers === undefined
        ? { url }
        : {
            url,
            headers: Object.fromEntries(
              Object.entries(headers).map(([name, value]) => [name, SENSITIVE.test(name) ? '***' : value]),
            ),
          },
    ),
    ...(sharedSecret === undefined ? {} : { sharedSecret: mask(sharedSecret) as string | string[] }),
    ...(standardSecret === undefined ? {} : { standardSecret: mask(standardSecret) as string | string[] }),
  }
}

function oneLine(destination: StoredDestination): string {
  const urls = destination.webhooks.map((webhook) => webhook.url).join(' ')
  const state = destination.enabled ? 'enabled ' : 'disabled'
  return escapeControl(`${destination.id}  ${state}  ${destination.mode}  v${destination.version}  ${urls}`)
}

function print(options: Options, destination: StoredDestination): void {
  printRecord(options.json, shown(destination, options.showSecrets))
}

/** One attempt as a line: when, which event, where, the how-many-th, the outcome, how long, and why it failed. */
function attemptLine(attempt: LoggedAttempt): string {
  const outcome = attempt.accepted
    ? String(attempt.status)
    : [attempt.code, attempt.status].filter((part) => part !== undefined).join(' ')
  const why = attempt.error === undefined ? '' : `  ${attempt.error}`
  return escapeControl(
    `${new Date(attempt.at).toISOString()}  ${attempt.eventId}  ${attempt.url}  #${attempt.attempt}  ${outcome}  ${attempt.durationMs} ms${why}`,
  )
}

/**
 * `set` from the command line replaces the whole destination: says what the destination had that
 * the new one has not (its secrets and headers, which a `set --url` quietly drops), and that a
 * disabled destination is enabled again (a destination is enabled unless it says otherwise).
 */
function warnChanged(before: StoredDestination, after: StoredDestination, fromFlags: boolean): void {
  const gone = fromFlags
    ? [
        ...(before.sharedSecret !== undefined && after.sharedSecret === undefined ? ['its sharedSecret'] : []),
        ...(before.standardSecret !== undefined && after.standardSecret === undefined ? ['its standardSecret'] : []),
        ...(before.webhooks.some((webhook) => webhook.headers !== undefined) &&
        after.webhooks.every((webhook) => webhook.headers === undefined)
          ? ['its headers']
          : []),
      ]
    : []
  if (gone.length > 0) {
    const unsigned = after.sharedSecret === undefined && after.standardSecret === undefined
    process.stderr.write(
      `warning: set replaced ${escapeControl(after.id)} whole, and ${gone.join(', ')} went with it${unsigned ? ': its requests now go out unsigned' : ''}. Give them again (--secret, --standard-secret, or --file with the whole destination) to keep them.\n`,
    )
  }
  if (!before.enabled && after.enabled)
    process.stderr.write(
      `warning: ${escapeControl(after.id)} was disabled, and set enabled it: workers send its events again. To keep it off, give "enabled": false in --file, or run disable after.\n`,
    )
}

/** How `show` prints a value it hides. */
const MASK = '***'

/** The fields of a destination `show` may print as {@link MASK}, as they appear in a file. */
function maskedFields(given: Record<string, unknown>): string[] {
  const masked: string[] = []
  for (const field of ['sharedSecret', 'standardSecret']) {
    const value = given[field]
    if (value === MASK || (Array.isArray(value) && value.includes(MASK))) masked.push(field)
  }
  const webhooks = Array.isArray(given['webhooks']) ? given['webhooks'] : []
  webhooks.forEach((webhook: unknown, index) => {
    const headers = (webhook as { headers?: unknown } | null)?.headers
    if (typeof headers !== 'object' || headers === null) return
    for (const [name, value] of Object.entries(headers))
      if (value === MASK) masked.push(`webhooks[${index}].headers.${name}`)
  })
  return masked
}

/**
 * The destination `set` writes: from `--file`, or from `--url`, `--secret` and `--mode`. A file
 * may be what `show --json` printed: its `updatedAt` is left out, and its `version` is the
 * version the write expects (as `--if-version`, which wins when both are given).
 */
function destinationOf(options: Options, id: string): { destination: Destination; version?: number } {
  if (options.file !== undefined) {
    if (
      options.url !== undefined ||
      options.secret !== undefined ||
      options.standardSecret !== undefined ||
      options.mode !== undefined
    )
      usageError(
        'give the destination either with --file or with --url, --secret, --standard-secret and --mode, not both',
      )
    let parsed: unknown
    try {
      parsed = JSON.parse(readFileSync(options.file === '-' ? 0 : options.file, 'utf8'))
    } catch (error) {
      usageError(`option '--file' could not be read as JSON: ${(error as Error).message}`)
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      usageError("option '--file' must hold one destination, a JSON object")
    const { version, updatedAt: _printed, ...given } = parsed as Record<string, unknown>
    if (given['id'] !== undefined && given['id'] !== id)
      usageError(`the file is destination ${JSON.stringify(given['id'])}, not ${JSON.stringify(id)}`)
    const masked = maskedFields(given)
    if (masked.length > 0)
      usageError(
        `the file's ${masked.join(', ')} ${masked.length === 1 ? 'is' : 'are'} "${MASK}", as show prints what it hides: set would store "${MASK}" and sign with it. Read the destination with show --json --show-secrets, or give the secret with --secret.`,
      )
    if (version !== undefined && (typeof version !== 'number' || !Number.isInteger(version) || version < 0))
      usageError(
        `the file's version must be a whole number, as show --json prints it; leave it out to write whatever the registry holds`,
      )
    return { destination: { ...given, id } as unknown as Destination, ...(version === undefined ? {} : { version }) }
  }
  if (options.url === undefined) usageError('set needs the destination: --url URL (repeatable) or --file FILE')
  return {
    destination: {
      id,
      webhooks: options.url.map((url) => ({ url })),
      ...(options.secret === undefined ? {} : { sharedSecret: options.secret }),
      ...(options.standardSecret === undefined ? {} : { standardSecret: options.standardSecret }),
      ...(options.mode === undefined ? {} : { mode: options.mode as 'any' | 'each' }),
    },
  }
}

async function act(
  queue: WebhookQueue,
  options: Options,
  action: Action,
  id: string | undefined,
  written: ReturnType<typeof destinationOf> | undefined,
): Promise<ExitCode> {
  const registry = queue.destinations
  switch (action) {
    case 'list': {
      const { destinations, unreadable } = await registry.list()
      printListed(options.json, destinations, unreadable, oneLine, (destination) =>
        shown(destination, options.showSecrets),
      )
      return EXIT.ok
    }
    case 'show': {
      const destination = await registry.get(id as string)
      if (destination === undefined) return absent(id as string)
      print(options, destination)
      return EXIT.ok
    }
    case 'attempts': {
      const attempts = await queue.attempts({
        destination: id,
        eventId: options.event,
        limit: options.limit,
        since: options.since,
        until: options.until,
      })
      // Nothing logged for an id the registry does not hold: most likely a typo, not a quiet customer.
      if (attempts.length === 0 && (await registry.get(id as string)) === undefined) return absent(id as string)
      for (const attempt of attempts) {
        if (options.json) writeJsonLine(process.stdout, attempt)
        else process.stdout.write(`${attemptLine(attempt)}\n`)
      }
      return EXIT.ok
    }
    case 'replay': {
      const result = await queue.replay({ destination: id, since: options.since as number, until: options.until })
      if (options.json) writeJsonLine(process.stdout, { id, ...result })
      else process.stdout.write(`${replayLine(id as string, result)}\n`)
      return EXIT.ok
    }
    case 'set': {
      const { destination: given, version } = written as { destination: Destination; version?: number }
      const before = await registry.get(id as string)
      const stored = await registry.set(given, { ifVersion: options.ifVersion ?? version })
      if (before !== undefined) warnChanged(before, stored, options.file === undefined)
      warnStandardAsShared(stored)
      print({ ...options, showSecrets: false }, stored)
      return EXIT.ok
    }
    case 'disable':
    case 'enable': {
      const stored = await (action === 'disable' ? registry.disable(id as string) : registry.enable(id as string))
      if (stored === undefined) return absent(id as string)
      if (options.json)
        writeJsonLine(process.stdout, { id: stored.id, enabled: stored.enabled, version: stored.version })
      else
        process.stdout.write(
          `${escapeControl(stored.id)}: ${stored.enabled ? 'enabled' : 'disabled'} (version ${stored.version})\n`,
        )
      return EXIT.ok
    }
    case 'delete': {
      // A source that sends to it would have its events answered 200 and dropped.
      const users = (await queue.sources.list()).sources.filter((source) => source.destinations.includes(id as string))
      if (users.length > 0 && !options.force)
        usageError(
          `sources ${users.map((source) => JSON.stringify(source.id)).join(', ')} send to ${JSON.stringify(id)}: their events would be dropped. Take it out of them first (eventwire sources set <id> --destination …), or delete with --force.`,
        )
      if (!(await registry.delete(id as string))) return absent(id as string)
      printDeleted(options.json, id as string)
      return EXIT.ok
    }
  }
}

/** `eventwire destinations`: the registry of destinations of a queue, from the shell. */
export const destinationsCommand: Command = defineCommand({
  name: 'destinations',
  summary: "list and change the destinations of a queue's registry in Redis",
  description:
    "Reads and writes the registry of destinations that producers route to and workers deliver to (docs/destinations.md). Changes reach every producer and worker within a second. Secrets and credential headers print as *** unless --show-secrets. 'attempts' prints a destination's attempt log, newest first. 'replay' sends again what the destination was delivered in a window, as kept by workers with keepSent.",
  operand: { name: 'action', description: 'what to do', choices: ACTIONS },
  argument: {
    name: 'id',
    description: 'the destination',
    for: ['show', 'attempts', 'replay', 'set', 'disable', 'enable', 'delete'],
  },
  options: OPTIONS,
  epilog:
    'Exit codes: 0 done, 1 no such destination or Redis failed, 2 bad command line or destination.\n\nExamples:\n  $ eventwire destinations set acme --url https://hooks.acme.example/in --secret s3cret\n  $ eventwire destinations set acme --file acme.json\n  $ eventwire destinations attempts acme --limit 20\n  $ eventwire destinations replay acme --since 2026-11-28T14:00:00Z --until 2026-11-28T15:00:00Z\n  $ eventwire destinations disable acme',
  run: (options, action, id) => {
    // Checked before Redis is asked: a wrong command line is known at once.
    if (
      action !== 'set' &&
      (options.file ?? options.url ?? options.secret ?? options.mode ?? options.ifVersion) !== undefined
    )
      usageError(`${action} takes none of --file, --url, --secret, --mode, --if-version`)
    if (action !== 'delete' && options.force) usageError(`${action} takes no --force`)
    if (action !== 'attempts' && (options.event ?? options.limit) !== undefined)
      usageError(`${action} takes neither --event nor --limit`)
    if (action !== 'attempts' && action !== 'replay' && (options.since ?? options.until) !== undefined)
      usageError(`${action} takes neither --since nor --until`)
    if (options.since !== undefined && options.until !== undefined && options.until < options.since)
      usageError(
        `--until is before --since (${new Date(options.until).toISOString()} < ${new Date(options.since).toISOString()}): give a window that ends after it starts`,
      )
    if (action === 'replay' && options.since === undefined)
      usageError('replay needs --since: the start of the window (e.g. --since 2h, or --since 2026-11-28T14:00:00Z)')
    const written = action === 'set' ? destinationOf(options, id as string) : undefined
    return onQueue(options, (queue) => act(queue, options, action, id, written))
  },
})
