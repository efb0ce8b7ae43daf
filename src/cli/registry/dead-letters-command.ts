import type { DeadLetter, WebhookQueue } from '../../webhook/bullmq/index.js'
import { countArgument, millisecondsArgument } from '../arguments.js'
import { defineCommand, type Command } from '../command-line.js'
import { EXIT, type ExitCode } from '../exit-codes.js'
import type { OptionSpecs, OptionValues } from '../options.js'
import { escapeControl, writeJsonLine } from '../terminal.js'
import { usageError } from '../usage.js'
import { absent, onQueue, REDIS_OPTIONS } from './connect.js'

const ACTIONS = ['list', 'redrive', 'purge'] as const
type Action = (typeof ACTIONS)[number]

const OPTIONS = {
  ...REDIS_OPTIONS,
  destination: {
    long: 'destination',
    short: 'd',
    value: 'id',
    description: "list, redrive: only this destination's dead letters (the registry's id)",
  },
  limit: {
    long: 'limit',
    value: 'n',
    description: 'list: at most this many, most recently failed first',
    parse: countArgument,
    default: 100,
  },
  all: { long: 'all', description: 'redrive: every dead letter (of --destination, if given)' },
  olderThan: {
    long: 'older-than',
    value: 'ms',
    description: 'purge: only those that failed more than this long ago',
    parse: millisecondsArgument,
    default: 0,
  },
} as const satisfies OptionSpecs

type Options = OptionValues<typeof OPTIONS>

/** Dead letters are read this many at a time. */
const PAGE = 100

/** Whether a dead letter is one the command is asked about. */
const matches = (letter: DeadLetter, destination: string | undefined) =>
  destination === undefined || letter.destination === destination

function printLetter(letter: DeadLetter, json: boolean | undefined): void {
  if (json) {
    writeJsonLine(process.stdout, letter)
    return
  }
  const at = letter.failedAt === undefined ? '-' : new Date(letter.failedAt).toISOString()
  // A dash for no destination: the reason stays in its column.
  process.stdout.write(`${escapeControl(`${at}  ${letter.eventId}  ${letter.destination ?? '-'}  ${letter.reason}`)}\n`)
}

/**
 * Calls `each` for the dead letters of `destination`, most recent first, until it says `'stop'`.
 * `each` says whether the letter left the list (`'left'`: re-driven) or stayed: the next page
 * starts after the ones that stayed. A letter that fails meanwhile comes in at the front and is
 * left for the next run.
 */
async function eachLetter(
  queue: WebhookQueue,
  destination: string | undefined,
  each: (letter: DeadLetter) => Promise<'left' | 'stayed' | 'stop'>,
): Promise<void> {
  let stayed = 0
  for (;;) {
    const page = await queue.deadLetters(stayed, stayed + PAGE - 1)
    for (const letter of page) {
      const outcome = matches(letter, destination) ? await each(letter) : 'stayed'
      if (outcome === 'stop') return
      if (outcome === 'stayed') stayed++
    }
    if (page.length < PAGE) return
  }
}

async function act(
  queue: WebhookQueue,
  options: Options,
  action: Action,
  eventId: string | undefined,
): Promise<ExitCode> {
  const { destination, json } = options
  switch (action) {
    case 'list': {
      let shown = 0
      if (options.limit > 0)
        await eachLetter(queue, destination, async (letter) => {
          printLetter(letter, json)
          return ++shown < options.limit ? 'stayed' : 'stop'
        })
      // No dead letter, and no such destination: most likely a typo, not a healthy customer.
      if (shown === 0 && destination !== undefined && (await queue.destinations.get(destination)) === undefined)
        return absent(destination)
      // Said on stderr: an empty list reads the same as a command that printed nothing, and a
      // script that reads stdout gets nothing either way.
      if (shown === 0 && !json)
        process.stderr.write(
          destination === undefined
            ? 'no dead letters\n'
            : `no dead letters of destination ${escapeControl(destination)}\n`,
        )
      return EXIT.ok
    }
    case 'redrive': {
      if (eventId !== undefined) {
        const sent = await queue.redrive(eventId, { destination })
        if (json) writeJsonLine(process.stdout, { eventId, destination, redriven: sent })
        else if (sent) process.stdout.write(`re-driven ${escapeControl(eventId)}\n`)
        else
          process.stderr.write(
            `error: no dead letter ${escapeControl(JSON.stringify(eventId))}${destination === undefined ? ' without a destination (a dead letter of a destination needs --destination <id>)' : ` of destination ${escapeControl(destination)}`}\n`,
          )
        return sent ? EXIT.ok : EXIT.failed
      }
      let redriven = 0
      const refused: string[] = []
      await eachLetter(queue, destination, async (letter) => {
        try {
          const sent = await queue.redrive(letter.eventId, { destination: letter.destination })
          if (sent) redriven++
          return sent ? 'left' : 'stayed'
        } catch (error) {
          // A dead letter eventwire cannot read stays: said, and the others go on.
          refused.push(`${letter.eventId}: ${(error as Error).message}`)
          return 'stayed'
        }
      })
      if (json) writeJsonLine(process.stdout, { redriven, refused: refused.length })
      else process.stdout.write(`re-driven ${redriven} dead letter(s)\n`)
      for (const reason of refused) process.stderr.write(`error: ${escapeControl(reason)}\n`)
      return refused.length === 0 ? EXIT.ok : EXIT.failed
    }
    case 'purge': {
      const removed = await queue.purgeDeadLetters(options.olderThan)
      if (json) writeJsonLine(process.stdout, { purged: removed })
      else process.stdout.write(`purged ${removed} dead letter(s)\n`)
      return EXIT.ok
    }
  }
}

/** `eventwire dead-letters`: a queue's dead letters, from the shell. */
export const deadLettersCommand: Command = defineCommand({
  name: 'dead-letters',
  summary: "list, re-drive and purge a queue's dead letters",
  description:
    'Lists the events that failed for good or ran out of their retry window, most recently failed first; sends them again with a fresh window (redrive); or removes them (purge). See docs/durable-delivery.md.',
  operand: { name: 'action', description: 'what to do', choices: ACTIONS },
  argument: { name: 'eventId', description: 'the event to re-drive; or --all', for: ['redrive'], optional: true },
  options: OPTIONS,
  epilog:
    'Exit codes: 0 done, 1 no such dead letter or destination, one could not be re-driven, or Redis failed, 2 bad command line.\n\nExamples:\n  $ eventwire dead-letters list --destination acme\n  $ eventwire dead-letters redrive --all --destination acme\n  $ eventwire dead-letters purge --older-than 604800000',
  run: (options, action, eventId) => {
    if (action === 'redrive' && (eventId === undefined) === !options.all)
      usageError('redrive takes one event id, or --all')
    if (action !== 'redrive' && options.all) usageError(`${action} takes no --all`)
    if (action === 'purge' && options.destination !== undefined)
      usageError("purge removes every destination's dead letters; it takes no --destination")
    return onQueue(options, (queue) => act(queue, options, action, eventId))
  },
})
