/** Something waiting for a retry, due at `dueAt` (ms on its scheduler's clock). */
export interface Due {
  readonly dueAt: number
}

/**
 * Where events waiting for a retry are kept, earliest first. The in-memory default is
 * {@link MemoryRetryStore}; a durable store keeps them across restarts.
 */
export interface RetryStore<Item extends Due> {
  readonly size: number
  add(item: Item): void
  /** The earliest item, left in place. */
  peek(): Item | undefined
  /** Removes and returns the earliest item. */
  shift(): Item | undefined
  /** Removes and returns every item. */
  takeAll(): Item[]
}

/** A binary min-heap on `dueAt`: O(log n) add and shift, no timer per item. */
export class MemoryRetryStore<Item extends Due> implements RetryStore<Item> {
  readonly #heap: Item[] = []

  get size(): number {
    return this.#heap.length
  }

  add(item: Item): void {
    const heap = this.#heap
    let index = heap.push(item) - 1
    while (index > 0) {
      const parent = (index - 1) >> 1
      const above = heap[parent] as Item
      if (above.dueAt <= item.dueAt) break
      heap[index] = above
      index = parent
    }
    heap[index] = item
  }

  peek(): Item | undefined {
    return this.#heap[0]
  }

  shift(): Item | undefined {
    const heap = this.#heap
    const first = heap[0]
    const last = heap.pop()
    if (first === undefined || last === undefined || heap.length === 0) return first
    let index = 0
    for (;;) {
      const left = 2 * index + 1
      if (left >= heap.length) break
      const right = left + 1
      const child = right < heap.length && (heap[right] as Item).dueAt < (heap[left] as Item).dueAt ? right : left
      if ((heap[child] as Item).dueAt >= last.dueAt) break
      heap[index] = heap[child] as Item
      index = child
    }
    heap[index] = last
    return first
  }

  takeAll(): Item[] {
    return this.#heap.splice(0)
  }
}
