import type { MessageType } from '../../index.js'

/** The `eventwire send` options that become message fields; an option not given is `undefined`. */
export interface MessageOptions {
  user?: string | undefined
  anonymous?: string | undefined
  event?: string | undefined
  name?: string | undefined
  category?: string | undefined
  group?: string | undefined
  previous?: string | undefined
  prop?: Record<string, unknown> | undefined
  trait?: Record<string, unknown> | undefined
  context?: Record<string, unknown> | undefined
  integration?: Record<string, unknown> | undefined
  messageId?: string | undefined
  timestamp?: string | undefined
}

/** Which field each type keeps its free-form key/values in. */
const BAG: Record<MessageType, 'properties' | 'traits' | undefined> = {
  identify: 'traits',
  track: 'properties',
  page: 'properties',
  screen: 'properties',
  group: 'traits',
  alias: undefined,
}

/**
 * Turns the command line into a call's input; the client validates it, so a missing field fails
 * with the same message a program would get.
 */
export function toMessage(type: MessageType, options: MessageOptions): Record<string, unknown> {
  const fields: Array<[string, unknown]> = [
    ['userId', options.user],
    ['anonymousId', options.anonymous],
    ['event', options.event],
    ['name', options.name],
    ['category', options.category],
    ['groupId', options.group],
    ['previousId', options.previous],
    ['context', options.context],
    ['integrations', options.integration],
    ['messageId', options.messageId ?? crypto.randomUUID()],
    ['timestamp', options.timestamp],
  ]
  const bag = BAG[type]
  if (bag !== undefined) fields.push([bag, bag === 'traits' ? options.trait : options.prop])
  return Object.fromEntries(fields.filter(([, value]) => value !== undefined))
}

/** Options given that the type has no field for, so a typo does not pass silently. */
export function unusedOptions(type: MessageType, options: MessageOptions): string[] {
  const uses: Record<string, readonly MessageType[]> = {
    event: ['track'],
    name: ['page', 'screen'],
    category: ['page', 'screen'],
    group: ['group'],
    previous: ['alias'],
    prop: ['track', 'page', 'screen'],
    trait: ['identify', 'group'],
  }
  return Object.keys(uses).filter(
    (option) => options[option as keyof MessageOptions] !== undefined && !uses[option]?.includes(type),
  )
}
