/**
 * First-in first-out queue over one array: `shift()` moves a head index instead of copying, and
 * the consumed prefix is dropped once it is the larger half.
 */
export class Queue<Item> {
  #items: Item[] = []
  #head = 0

  /** Items waiting. */
  get length(): number {
    return this.#items.length - this.#head
  }

  push(item: Item): void {
    this.#items.push(item)
  }

  peek(): Item | undefined {
    return this.#items[this.#head]
  }

  shift(): Item | undefined {
    if (this.#head >= this.#items.length) return undefined
    const item = this.#items[this.#head++]
    if (this.#head === this.#items.length) {
      this.#items = []
      this.#head = 0
    } else if (this.#headIsWorthDropping()) {
      this.#items = this.#items.slice(this.#head)
      this.#head = 0
    }
    return item
  }

  /** Once 1024 items are consumed and they are at least half the array: each item is copied at most once on average. */
  #headIsWorthDropping(): boolean {
    // Stryker disable next-line LogicalOperator,ConditionalExpression: dropping the head more often costs copies, not order, count or the memory bound.
    return this.#head >= 1024 && this.#head * 2 >= this.#items.length
  }

  /** Removes and returns every waiting item. */
  takeAll(): Item[] {
    const items = this.#items.slice(this.#head)
    this.#items = []
    this.#head = 0
    return items
  }
}
