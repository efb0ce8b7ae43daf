import type { DeliveryResult } from '../../src/webhook/index.js'

/** An engine that tells each event's end: in memory, a worker, or one instrumented. */
interface EndingEngine {
  on(event: 'delivered' | 'failed', listener: (result: DeliveryResult) => void): unknown
}

/** Resolves with the results of the next `count` events `engine` ends, delivered or failed, in the order they end. */
export function ended(engine: EndingEngine, count: number): Promise<DeliveryResult[]> {
  const results: DeliveryResult[] = []
  return new Promise((resolve) => {
    const one = (result: DeliveryResult) => {
      if (results.push(result) === count) resolve(results)
    }
    engine.on('delivered', one)
    engine.on('failed', one)
  })
}
