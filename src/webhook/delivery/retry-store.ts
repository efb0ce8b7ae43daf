/** Something waiting for a retry, due at `dueAt` (ms on its scheduler's clock). */
export interface Due {
  readonly dueAt: number
  /** Where a {@link MemoryRetryStore} holds it, for {@link RetryStore.remove}; the store's to set. */
  slot?: number | undefined
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
  /** Removes `item`, wherever it is; nothing when the store does not hold it. */
  remove(item: Item): void
  /** Removes and returns every item. */
  takeAll(): Item[]
}

/**
 * A binary min-heap on `dueAt`: O(log n) add, shift and remove, no timer per item. Each item
 * carries its place in the heap (`slot`), so that one that is no longer wanted (its event ended
 * at another URL) leaves at once instead of holding its memory until it falls due.
 */
export class MemoryRetryStore<Item extends Due> implements RetryStore<Item> {
  readonly #heap: Item[] = []

  get size(): number {
    return this.#heap.length
  }

  add(item: Item): void {
    this.#up(item, this.#heap.push(item) - 1)
  }

  peek(): Item | undefined {
    return this.#heap[0]
  }

  shift(): Item | undefined {
    const first = this.#heap[0]
    if (first !== undefined) this.remove(first)
    return first
  }

  remove(item: Item): void {
    const heap = this.#heap
    const index = item.slot
    if (index === undefined || heap[index] !== item) return
    item.slot = undefined
    const last = heap.pop() as Item
    if (last === item) return
    // The last item takes the removed one's place, then moves up or down to where it belongs.
    // Stryker disable next-line EqualityOperator: with a parent equal to it, up stays put and down sifts it; both keep the order.
    if (index > 0 && (heap[(index - 1) >> 1] as Item).dueAt > last.dueAt) this.#up(last, index)
    else this.#down(last, index)
  }

  takeAll(): Item[] {
    const all = this.#heap.splice(0)
    for (const item of all) item.slot = undefined
    return all
  }

  #up(item: Item, from: number): void {
    const heap = this.#heap
    let index = from
    while (index > 0) {
      const parent = (index - 1) >> 1
      const above = heap[parent] as Item
      // Stryker disable next-line EqualityOperator: moving past an equal parent keeps the heap order; ties have none.
      if (above.dueAt <= item.dueAt) break
      heap[index] = above
      above.slot = index
      index = parent
    }
    heap[index] = item
    item.slot = index
  }

  #down(item: Item, from: number): void {
    const heap = this.#heap
    let index = from
    for (;;) {
      const left = 2 * index + 1
      if (left >= heap.length) break
      const right = left + 1
      // Stryker disable next-line EqualityOperator: either of two equal children keeps the heap order.
      const child = right < heap.length && (heap[right] as Item).dueAt < (heap[left] as Item).dueAt ? right : left
      const below = heap[child] as Item
      // Stryker disable next-line EqualityOperator: moving below an equal child keeps the heap order.
      if (below.dueAt >= item.dueAt) break
      heap[index] = below
      below.slot = index
      index = child
    }
    heap[index] = item
    item.slot = index
  }
}
