import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { MAX_BATCH_BYTES } from '../../src/core/limits.js'
import {
  KEEPALIVE_BUDGET,
  NO_PAGE,
  PageKeepalive,
  pageLifecycle,
  type KeptMessage,
} from '../../src/client/page-exit.js'
import type { UnsentStore } from '../../src/client/page-store.js'

// The page lifecycle on its own, on a fake clock: what wakes a batch waiting for its retry, what
// the budget holds, what is kept and given back. (The client in an emulated page is
// page-exit.test.ts; real Chromium is test/runtimes/browser-pages.mjs.)

function fakePage() {
  const window = new EventTarget()
  const document = { visibilityState: 'visible' }
  const told: string[] = []
  // A window as the page sees it: its events, and a document.
  const host = {
    document,
    addEventListener: window.addEventListener.bind(window),
    removeEventListener: window.removeEventListener.bind(window),
  } as unknown as ConstructorParameters<typeof PageKeepalive>[0]
  const stored: KeptMessage[] = []
  const store: UnsentStore = {
    keep: (messages) => {
      const room = Math.max(0, 2 - stored.length)
      stored.push(...messages.slice(0, room).map(({ type, messageId, json }) => ({ type, messageId, json })))
      return Math.min(room, messages.length)
    },
    take: () => stored.splice(0),
  }
  const page = new PageKeepalive(
    host,
    {
      sendQueued: () => told.push('sendQueued'),
      leave: () => told.push('leave'),
      takeKept: () => told.push('takeKept'),
    },
    store,
  )
  const visibility = (state: string) => {
    document.visibilityState = state
    window.dispatchEvent(new Event('visibilitychange'))
  }
  return {
    page,
    told,
    stored,
    hide: () => visibility('hidden'),
    show: () => visibility('visible'),
    leave: () => window.dispatchEvent(new Event('pagehide')),
    back: (persisted = true) => window.dispatchEvent(Object.assign(new Event('pageshow'), { persisted })),
  }
}

/** Where a wait stands: `'pending'`, or what it settled with. */
function watch(waiting: Promise<boolean>) {
  const state: { value: boolean | 'pending' | 'rejected'; reason?: unknown } = { value: 'pending' }
  waiting.then(
    (value) => {
      state.value = value
    },
    (reason: unknown) => {
      state.value = 'rejected'
      state.reason = reason
    },
  )
  return state
}

const never = () => new AbortController().signal

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('PageKeepalive: the wait before a retry', () => {
  it('ends after its delay, with a retry', async () => {
    const { page } = fakePage()
    const wait = watch(page.retryWaits().wait(1_000, 0, never()))
    await vi.advanceTimersByTimeAsync(999)
    expect(wait.value).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    expect(wait.value).toBe(true)
  })

  it('ends at once when the page is hidden, once per batch: the next hidings leave that batch waiting', async () => {
    const { page, hide, show, told } = fakePage()
    const waits = page.retryWaits()
    const first = watch(waits.wait(60_000, 0, never()))
    hide()
    await vi.advanceTimersByTimeAsync(0)
    expect(first.value).toBe(true)
    expect(told).toEqual(['sendQueued'])
    const second = watch(waits.wait(60_000, 0, never()))
    for (let toggle = 0; toggle < 12; toggle++) {
      show()
      hide()
    }
    await vi.advanceTimersByTimeAsync(0)
    expect(second.value).toBe('pending')
    // Another batch has its own early attempt.
    const other = watch(page.retryWaits().wait(60_000, 0, never()))
    hide()
    await vi.advanceTimersByTimeAsync(0)
    expect(other.value).toBe(true)
    expect(second.value).toBe('pending')
    await vi.advanceTimersByTimeAsync(60_000)
    expect(second.value).toBe(true)
  })

  it('ends at once when the page is left, even for a batch that had its early attempt', async () => {
    const { page, hide, leave, told } = fakePage()
    const waits = page.retryWaits()
    const first = watch(waits.wait(60_000, 0, never()))
    hide()
    await vi.advanceTimersByTimeAsync(0)
    expect(first.value).toBe(true)
    expect(waits.leaving()).toBe(false)
    const second = watch(waits.wait(60_000, 0, never()))
    leave()
    await vi.advanceTimersByTimeAsync(0)
    expect(second.value).toBe(true)
    expect(waits.leaving()).toBe(true)
    expect(page.left).toBe(true)
    expect(told).toEqual(['sendQueued', 'leave'])
  })

  it("never cuts the server's Retry-After short: hiding leaves it waiting, leaving ends it without a retry", async () => {
    const { page, hide, leave } = fakePage()
    const hidden = watch(page.retryWaits().wait(5_000, 5_000, never()))
    hide()
    await vi.advanceTimersByTimeAsync(0)
    expect(hidden.value).toBe('pending')
    leave()
    await vi.advanceTimersByTimeAsync(0)
    expect(hidden.value).toBe(false)
  })

  it('once the server asked time has passed, a longer backoff may end early as the page is hidden', async () => {
    const { page, hide } = fakePage()
    const wait = watch(page.retryWaits().wait(10_000, 2_000, never()))
    await vi.advanceTimersByTimeAsync(1_999)
    hide()
    await vi.advanceTimersByTimeAsync(0)
    expect(wait.value).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    hide()
    await vi.advanceTimersByTimeAsync(0)
    expect(wait.value).toBe(true)
  })

  it("rejects with close()'s reason when its signal aborts, during the wait or before it", async () => {
    const { page, hide } = fakePage()
    const deadline = new AbortController()
    const during = watch(page.retryWaits().wait(60_000, 0, deadline.signal))
    deadline.abort(new Error('close() timed out'))
    await vi.advanceTimersByTimeAsync(0)
    expect(during).toMatchObject({ value: 'rejected', reason: new Error('close() timed out') })
    const before = watch(page.retryWaits().wait(60_000, 0, deadline.signal))
    await vi.advanceTimersByTimeAsync(0)
    expect(before).toMatchObject({ value: 'rejected', reason: new Error('close() timed out') })
    // Ended waits are no longer woken: hiding now resolves nothing twice.
    hide()
    await vi.advanceTimersByTimeAsync(0)
    expect(before.value).toBe('rejected')
  })
})

describe('PageKeepalive: the budget, the states and what is kept', () => {
  it('counts the keepalive bodies in flight; releasing tells whether the page is hidden or left', () => {
    const { page, hide, show, leave } = fakePage()
    expect(page.keepalive).toBe(true)
    expect(page.room()).toBe(KEEPALIVE_BUDGET)
    page.hold(10_000)
    page.hold(5_000)
    expect(page.room()).toBe(KEEPALIVE_BUDGET - 15_000)
    expect(page.release(5_000)).toBe(false)
    expect(page.room()).toBe(KEEPALIVE_BUDGET - 10_000)
    hide()
    expect(page.release(1_000)).toBe(true)
    show()
    expect(page.release(1_000)).toBe(false)
    leave()
    expect(page.release(1_000)).toBe(true)
    // Hidden after pagehide (browsers fire them in that order): still being left.
    hide()
    expect(page.left).toBe(true)
    show()
    expect(page.left).toBe(false)
  })

  it('cuts a compression short as the page is left, not as it is hidden, and not once it ended', () => {
    const { page, hide, leave } = fakePage()
    const cut = vi.fn()
    const ended = vi.fn()
    page.whileCompressing(ended)()
    page.whileCompressing(cut)
    hide()
    expect(cut).not.toHaveBeenCalled()
    leave()
    expect(cut).toHaveBeenCalledTimes(1)
    expect(ended).not.toHaveBeenCalled()
  })

  it('keeps what the store takes, and gives it back with the callbacks of what this page kept', () => {
    const { page, stored } = fakePage()
    const callback = vi.fn()
    const message = (id: string, withCallback: boolean) => ({
      type: 'track' as const,
      messageId: id,
      json: `{"messageId":"${id}"}`,
      ...(withCallback ? { callback } : {}),
    })
    expect(page.keep([message('a', true), message('b', false), message('c', true)])).toBe(2)
    // Kept by another page of the origin: no callback here.
    stored.push({ type: 'track', messageId: 'other', json: '{}' })
    const taken = page.take()
    expect(taken.map((kept) => [kept.messageId, kept.callback])).toEqual([
      ['a', callback],
      ['b', undefined],
      ['other', undefined],
    ])
    // Given back once: a second take has nothing of them.
    page.keep([message('a', false)])
    expect(page.take().map((kept) => kept.callback)).toEqual([undefined])
  })

  it('asks the client to take kept messages back when the page returns from the back-forward cache, and only then', () => {
    const { page, told, leave, back } = fakePage()
    leave()
    back(false)
    expect(page.left).toBe(true)
    back()
    expect(page.left).toBe(false)
    expect(told).toEqual(['leave', 'takeKept'])
  })

  it('stops listening', () => {
    const { page, told, hide, leave, back } = fakePage()
    page.stop()
    hide()
    leave()
    back()
    expect(told).toEqual([])
  })
})

describe('NO_PAGE: the page of a client that has none', () => {
  it('sends without keepalive in batches of 500 KB, keeps nothing, and waits its whole delay', async () => {
    expect(NO_PAGE.keepalive).toBe(false)
    expect(NO_PAGE.left).toBe(false)
    NO_PAGE.hold(100_000)
    expect(NO_PAGE.room()).toBe(MAX_BATCH_BYTES)
    expect(NO_PAGE.release(100_000)).toBe(false)
    expect(NO_PAGE.keep([{ type: 'track', messageId: 'a', json: '{}' }])).toBe(0)
    expect(NO_PAGE.take()).toEqual([])
    const waits = NO_PAGE.retryWaits()
    expect(waits.leaving()).toBe(false)
    const wait = watch(waits.wait(1_000, 0, never()))
    await vi.advanceTimersByTimeAsync(999)
    expect(wait.value).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    expect(wait.value).toBe(true)
    NO_PAGE.stop()
  })
})

describe('pageLifecycle: which page a client gets', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
  })

  const client = { sendQueued: () => undefined, leave: () => undefined, takeKept: () => undefined }

  it('a PageKeepalive where there is a document and window events, with the store made for it', () => {
    const window = new EventTarget()
    vi.stubGlobal('document', { visibilityState: 'visible' })
    vi.stubGlobal('addEventListener', window.addEventListener.bind(window))
    vi.stubGlobal('removeEventListener', window.removeEventListener.bind(window))
    const store = vi.fn(() => undefined)
    const page = pageLifecycle(client, store)
    expect(page).toBeInstanceOf(PageKeepalive)
    expect(page.keepalive).toBe(true)
    expect(store).toHaveBeenCalledTimes(1)
    page.stop()
  })

  it.each([
    ['no document (Node, Deno, Workers, a browser worker)', false, true],
    ['a document but no window events', true, false],
  ])('NO_PAGE with %s, and no store made', (_where, withDocument, withEvents) => {
    if (withDocument) vi.stubGlobal('document', { visibilityState: 'visible' })
    // Node has no global addEventListener: a stand-in where the case wants one.
    if (withEvents) vi.stubGlobal('addEventListener', () => undefined)
    else vi.stubGlobal('addEventListener', undefined)
    const store = vi.fn(() => undefined)
    expect(pageLifecycle(client, store)).toBe(NO_PAGE)
    expect(store).not.toHaveBeenCalled()
  })
})
