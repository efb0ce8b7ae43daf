import { vi } from 'vitest'
import type { StorageArea } from '../../src/client/page-store.js'

/** A Storage stand-in over a Map: what `localStorage` is to the client. */
export class MemoryStorage implements StorageArea {
  readonly items = new Map<string, string>()
  get length(): number {
    return this.items.size
  }
  key(index: number): string | null {
    return [...this.items.keys()][index] ?? null
  }
  getItem(key: string): string | null {
    return this.items.get(key) ?? null
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value)
  }
  removeItem(key: string): void {
    this.items.delete(key)
  }
}

/**
 * A browser-like host: a document, `localStorage` and a real EventTarget for window events. (The
 * real browser runs are in test/runtimes: Chromium navigating away from a page.)
 */
export function browserLikeHost(given: StorageArea | 'none' = new MemoryStorage()) {
  const storage = given === 'none' ? undefined : given
  const window = new EventTarget()
  const document = { visibilityState: 'visible' }
  vi.stubGlobal('document', document)
  vi.stubGlobal('localStorage', storage)
  vi.stubGlobal('addEventListener', window.addEventListener.bind(window))
  vi.stubGlobal('removeEventListener', window.removeEventListener.bind(window))
  return {
    storage,
    hide() {
      document.visibilityState = 'hidden'
      window.dispatchEvent(new Event('visibilitychange'))
    },
    show() {
      document.visibilityState = 'visible'
      window.dispatchEvent(new Event('visibilitychange'))
    },
    leave: () => window.dispatchEvent(new Event('pagehide')),
    comeBack: () => window.dispatchEvent(Object.assign(new Event('pageshow'), { persisted: true })),
  }
}
