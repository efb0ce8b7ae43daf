import { OptionsError } from '../../core/errors/options-error.js'
import { checkOptionNames } from '../../core/option-checks.js'
import { isObject } from '../../core/validate.js'
import { toWebhookError, type AttemptFailure } from '../delivery/failure.js'
import { isRetriedFailure, type DeliveryState, type TargetState } from '../delivery/state.js'
import type { WebhookError } from '../delivery/webhook-error.js'
import type { Endpoint } from '../network/endpoint.js'
import { destinationKey } from './registry.js'

// Staged alerts. A URL whose events keep failing is told about in stages: once it has failed an
// event for a share of the retry window (a quarter, a half, three quarters by default), once an
// event's window ran out there, and once it accepts an event again. Each stage is told once for
// the whole fleet: the worker that raises it in Redis tells it. Redis is asked only on the paths
// of failure (a retry, a dead letter) and of recovery (an event delivered after a failure):
// healthy deliveries cost nothing here.

/** The `alerts` option of `WebhookWorkerOptions`. */
export interface AlertOptions {
  /**
   * Shares of the retry window at which a URL that keeps failing an event is told about, in
   * increasing order, each above 0 and below 1. @defaultValue [0.25, 0.5, 0.75]
   */
  shares?: readonly number[] | undefined
  /**
   * Disable a destination of the registry once every one of its URLs has had an event's window run
   * out, as `queue.destinations.disable()` does. @defaultValue false
   */
  autoDisable?: boolean | undefined
}

/** {@link AlertOptions} with defaults filled in. */
export interface ResolvedAlerts {
  readonly shares: readonly number[]
  readonly autoDisable: boolean
}

export const ALERT_DEFAULTS: ResolvedAlerts = { shares: [0.25, 0.5, 0.75], autoDisable: false }

/** A URL has failed an event for `share` of the retry window. */
export interface FailingAlert {
  readonly kind: 'failing'
  /** The registry's destination; absent for the workers' own `webhooks`. */
  readonly destination?: string
  readonly url: string
  /** The share of the retry window crossed: one of `alerts.shares`. */
  readonly share: number
  /** How long the URL has failed the event, in ms. */
  readonly failingForMs: number
  /** The failure behind it; absent while the URL's breaker held the event from its first attempt. */
  readonly error?: WebhookError
}

/** An event's retry window ran out at a URL. */
export interface GivenUpAlert {
  readonly kind: 'given-up'
  readonly destination?: string
  readonly url: string
  readonly failingForMs: number
  readonly error?: WebhookError
}

/** A URL accepted an event again after a `'failing'` or `'given-up'`. */
export interface BackAlert {
  readonly kind: 'back'
  readonly destination?: string
  readonly url: string
}

/** `autoDisable` disabled a destination: every URL of it gave up an event, and none has taken one since. */
export interface DisabledAlert {
  readonly kind: 'disabled'
  readonly destination: string
}

/** What a worker's `'alert'` listeners receive: narrow it by `kind`. */
export type DeliveryAlert = FailingAlert | GivenUpAlert | BackAlert | DisabledAlert

/**
 * Checks the `alerts` worker option.
 *
 * @returns `undefined` for `false`: no alerts.
 * @throws {@link OptionsError} naming the field it cannot use.
 */
export function resolveAlerts(value: unknown): ResolvedAlerts | undefined {
  if (value === undefined) return ALERT_DEFAULTS
  if (value === false) return undefined
  if (!isObject(value)) throw new OptionsError('alerts', 'expected { shares?, autoDisable? }, or false for none.')
  checkOptionNames(value, { shares: true, autoDisable: true }, { stages: 'shares', disable: 'autoDisable' }, 'alerts.')
  const shares = value['shares'] ?? ALERT_DEFAULTS.shares
  const increasing =
    Array.isArray(shares) &&
    shares.length >= 1 &&
    shares.length <= 10 &&
    shares.every(
      (share, index) =>
        typeof share === 'number' && share > 0 && share < 1 && (index === 0 || share > (shares[index - 1] as number)),
    )
  if (!increasing)
    throw new OptionsError(
      'alerts.shares',
      `expected 1 to 10 shares of the retry window in increasing order, each above 0 and below 1, such as [0.25, 0.5, 0.75]; got ${JSON.stringify(shares)}.`,
    )
  const autoDisable = value['autoDisable'] ?? ALERT_DEFAULTS.autoDisable
  if (typeof autoDisable !== 'boolean') throw new OptionsError('alerts.autoDisable', 'expected true or false.')
  return { shares: shares as number[], autoDisable }
}

/**
 * Raises a URL's stage. KEYS[1]: the hash. ARGV: the URL, the stage, the hash's expiry in ms, then
 * the URLs that must all be at the stage for the destination to be given up (none: not asked).
 * The hash's expiry is pushed back on every call, raised or not.
 * Returns {1 if raised now, 1 if every URL listed is at the stage}. A stored value that is not a
 * number reads as 0: it is written over.
 */
const RAISE = `
local stage = tonumber(ARGV[2])
local have = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') or 0
if stage > have then redis.call('HSET', KEYS[1], ARGV[1], stage) end
-- Pushed back while the URL still fails, so that its 'back' is told however long that lasts.
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if stage <= have then return {0, 0} end
if #ARGV < 4 then return {1, 0} end
for i = 4, #ARGV do
  if (tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0') or 0) < stage then return {1, 0} end
end
return {1, 1}
`

/** Ends a URL's stages. KEYS[1]: the hash; ARGV[1]: the URL. Returns the stage it had reached, 0 for none. */
const CLEAR = `
local have = redis.call('HGET', KEYS[1], ARGV[1])
if not have then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return tonumber(have) or 1
`

const RAISE_COMMAND = 'eventwireRaiseAlert'
const CLEAR_COMMAND = 'eventwireClearAlert'

/** What the alerts are kept with: BullMQ's ioredis connection. */
export interface AlertStore {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void
  [RAISE_COMMAND]?: (key: string, ...args: Array<string | number>) => Promise<[number, number]>
  [CLEAR_COMMAND]?: (key: string, url: string) => Promise<number>
}

/** Where the alerts go. */
export interface AlertHooks {
  alert(alert: DeliveryAlert): void
  /** Disables a destination of the registry; resolves whether it was enabled before. */
  disable(destination: string): Promise<boolean>
  failed(error: Error): void
}

/** How long this worker trusts what it knows of a URL's stage before it asks Redis again, at most: never longer than two retry windows, as long as Redis keeps the stage. */
export const ALERT_MEMORY_MS = 60_000

/** Pairs of a destination and a URL this worker remembers at most: the oldest is forgotten first. */
export const MAX_REMEMBERED_PAIRS = 10_000

interface Known {
  readonly stage: number
  readonly at: number
}

/**
 * A failure that says the URL is failing, rather than refusing this one event: one the retry rule
 * tries again, an open breaker, or a hold by the breaker before any attempt. An egress proxy's
 * failure is retried but says nothing of the URL: a proxy that is down alerts on no receiver.
 */
function failsTheUrl(failure: AttemptFailure | undefined, target: TargetState<Endpoint>): boolean {
  if (failure === undefined) return target.held === 'breaker'
  return failure.code === 'ERR_CIRCUIT_OPEN' || (failure.code !== 'ERR_PROXY' && isRetriedFailure(failure))
}

/**
 * A worker's staged alerts: after each round, what its URLs' outcomes say (see the top of this
 * file). Nothing here delays a delivery: Redis is written to on the side, its failures reported.
 */
export class DeliveryAlerts {
  readonly #keys: string
  readonly #settings: ResolvedAlerts
  readonly #retryWindowMs: number
  readonly #store: () => Promise<AlertStore>
  readonly #hooks: AlertHooks
  /** The highest stage this worker knows of, by destination and URL, and when it learnt it. */
  readonly #known = new Map<string, Known>()
  /** How long Redis keeps a URL's stage after its last raise: two retry windows. */
  readonly #keptMs: number
  /** How long this worker trusts what it knows of a pair: see {@link ALERT_MEMORY_MS}. */
  readonly #memoryMs: number
  /** Commands to Redis under way, and what they tell once answered. */
  readonly #pending = new Set<Promise<void>>()

  constructor(
    keys: string,
    settings: ResolvedAlerts,
    retryWindowMs: number,
    store: () => Promise<AlertStore>,
    hooks: AlertHooks,
  ) {
    this.#keys = keys
    this.#settings = settings
    this.#retryWindowMs = retryWindowMs
    this.#store = store
    this.#hooks = hooks
    this.#keptMs = 2 * retryWindowMs
    // Never longer than Redis keeps a stage: a worker that remembered a stage Redis has forgotten
    // would tell nothing of the URL's next failing.
    this.#memoryMs = Math.min(ALERT_MEMORY_MS, this.#keptMs)
  }

  /** The stage an event's window ran out at. */
  get #givenUp(): number {
    return this.#settings.shares.length + 1
  }

  /**
   * Looks at an event's URLs after a round, `now` on the clock of its `deadline`: raises the
   * stage of each URL failing it, and clears that of each URL that took it after failing.
   *
   * @param endpoints - The destination's URLs now: what must all be given up before it is disabled.
   */
  afterRound(
    destination: string | undefined,
    endpoints: readonly Endpoint[],
    state: DeliveryState<Endpoint>,
    now: number,
  ): void {
    for (const target of state.targets) {
      const url = target.endpoint.url
      if (target.status === 'delivered') {
        this.#back(destination, url, target.attempts > 1)
        continue
      }
      if (!failsTheUrl(target.failure, target)) continue
      const failingForMs = Math.max(0, now - (state.deadline - this.#retryWindowMs))
      if (target.status === 'failed') {
        // Stryker disable next-line EqualityOperator: at the deadline exactly, the window is spent either way.
        if (now >= state.deadline) this.#raise(destination, url, this.#givenUp, failingForMs, target, endpoints)
        continue
      }
      if (target.status !== 'pending') continue
      const share = failingForMs / this.#retryWindowMs
      let stage = 0
      // Stryker disable next-line ConditionalExpression,EqualityOperator: past the last share, the share read is undefined and the comparison false: the loop ends there either way.
      while (stage < this.#settings.shares.length && (this.#settings.shares[stage] as number) <= share) stage++
      if (stage > 0) this.#raise(destination, url, stage, failingForMs, target, endpoints)
    }
  }

  #pair(destination: string | undefined, url: string): string {
    // Stryker disable next-line StringLiteral: any stand-in that no destination id can be (ids are never empty, nor hold a space) keys the workers' own webhooks apart.
    return `${destination ?? ''} ${url}`
  }

  #remember(pair: string, stage: number): void {
    this.#known.delete(pair)
    if (this.#known.size >= MAX_REMEMBERED_PAIRS) {
      const oldest = this.#known.keys().next().value as string
      this.#known.delete(oldest)
    }
    this.#known.set(pair, { stage, at: performance.now() })
  }

  #raise(
    destination: string | undefined,
    url: string,
    stage: number,
    failingForMs: number,
    target: TargetState<Endpoint>,
    endpoints: readonly Endpoint[],
  ): void {
    const pair = this.#pair(destination, url)
    const known = this.#known.get(pair)
    if (known !== undefined && known.stage >= stage && performance.now() - known.at < this.#memoryMs) return
    this.#remember(pair, stage)
    const givenUp = stage === this.#givenUp
    const checkAll = givenUp && destination !== undefined && this.#settings.autoDisable
    this.#command(async (store) => {
      const [raised, allGivenUp] = await (store[RAISE_COMMAND] as NonNullable<AlertStore[typeof RAISE_COMMAND]>)(
        destinationKey(this.#keys, 'alerts', destination),
        url,
        stage,
        this.#keptMs,
        // Mapped only here: a give-up with autoDisable, not every round.
        ...(checkAll ? endpoints.map((endpoint) => endpoint.url) : []),
      )
      if (raised !== 1) return
      const error = target.failure && toWebhookError(target.failure, target.endpoint)
      const about = {
        ...(destination === undefined ? {} : { destination }),
        url,
        failingForMs,
        ...(error === undefined ? {} : { error }),
      }
      this.#hooks.alert(
        givenUp
          ? { kind: 'given-up', ...about }
          : { kind: 'failing', ...about, share: this.#settings.shares[stage - 1] as number },
      )
      // Only when asked: an answer of Redis's alone never disables a destination.
      if (checkAll && allGivenUp === 1 && (await this.#hooks.disable(destination as string)))
        this.#hooks.alert({ kind: 'disabled', destination: destination as string })
    })
  }

  /** A URL took an event: its stages end, if it had any (asked of Redis only after a failure, or once known to have them). */
  #back(destination: string | undefined, url: string, failedBefore: boolean): void {
    const pair = this.#pair(destination, url)
    const known = this.#known.get(pair)
    if (!failedBefore && (known === undefined || known.stage === 0)) return
    // Told to Redis once: until a failure raises a stage again, this worker knows there is none.
    if (known !== undefined && known.stage === 0 && performance.now() - known.at < this.#memoryMs) return
    this.#remember(pair, 0)
    this.#command(async (store) => {
      const had = await (store[CLEAR_COMMAND] as NonNullable<AlertStore[typeof CLEAR_COMMAND]>)(
        destinationKey(this.#keys, 'alerts', destination),
        url,
      )
      if (had > 0) this.#hooks.alert({ kind: 'back', ...(destination === undefined ? {} : { destination }), url })
    })
  }

  /** Resolves once every command under way has been answered and told (the worker's close() waits for it). */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending)
  }

  #command(run: (store: AlertStore) => Promise<void>): void {
    const command = this.#run(run)
    this.#pending.add(command)
    void command.finally(() => this.#pending.delete(command))
  }

  async #run(run: (store: AlertStore) => Promise<void>): Promise<void> {
    try {
      const store = await this.#store()
      if (store[RAISE_COMMAND] === undefined) {
        store.defineCommand(RAISE_COMMAND, { numberOfKeys: 1, lua: RAISE })
        store.defineCommand(CLEAR_COMMAND, { numberOfKeys: 1, lua: CLEAR })
      }
      await run(store)
    } catch (error) {
      this.#hooks.failed(error as Error)
    }
  }
}
