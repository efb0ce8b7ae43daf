import type { InstrumentOptions } from '../../webhook/otel/index.js'

// The metrics of `eventwire serve --metrics-port`, in the Prometheus text format, with no SDK to
// install: a meter provider of the OpenTelemetry API that keeps each series in memory and writes
// them out when scraped. The library's own instruments (eventwire/webhook/otel) and serve's are
// made on it, so the names are the ones docs/metrics.md lists, in Prometheus's spelling.

type MeterProvider = NonNullable<InstrumentOptions['meterProvider']>
type Meter = ReturnType<MeterProvider['getMeter']>
type Attributes = Record<string, unknown>
type InstrumentOptionsOf = Parameters<Meter['createHistogram']>[1]
type BatchCallback = Parameters<Meter['addBatchObservableCallback']>[0]
type SingleCallback = (result: { observe(value: number, attributes?: Attributes): void }) => void | Promise<void>

type Kind = 'counter' | 'gauge' | 'histogram'

/** One instrument's series, by their labels. */
class Family {
  readonly series = new Map<string, { labels: string; value: number; buckets?: number[]; sum?: number }>()
  readonly callbacks = new Set<SingleCallback>()

  constructor(
    readonly name: string,
    readonly kind: Kind,
    readonly help: string,
    readonly bounds: readonly number[] = [],
  ) {}

  /** Whether callbacks give its values: then a scrape has only what they observe now. */
  observable = false
  /** Whether a value is added to the series (a counter, an up-down counter), not put in its place. */
  adds = true

  /** Adds to a counter, sets a gauge, or records into a histogram. */
  take(value: number, attributes: Attributes | undefined): void {
    if (!Number.isFinite(value)) return
    const labels = labelsOf(attributes)
    let entry = this.series.get(labels)
    if (entry === undefined) {
      entry = { labels, value: 0 }
      if (this.kind === 'histogram') {
        entry.buckets = this.bounds.map(() => 0)
        entry.sum = 0
      }
      this.series.set(labels, entry)
    }
    if (this.kind === 'histogram') entry.value++
    else if (this.adds) entry.value += value
    else entry.value = value
    if (entry.buckets === undefined) return
    entry.sum = (entry.sum ?? 0) + value
    const buckets = entry.buckets
    for (const [index, bound] of this.bounds.entries()) if (value <= bound) buckets[index] = (buckets[index] ?? 0) + 1
  }
}

/** A metric name in Prometheus's spelling: dots to underscores, the unit and `_total` as suffixes. */
export function prometheusName(name: string, unit: string | undefined, kind: Kind): string {
  let base = name.replace(/[^A-Za-z0-9_:]/g, '_')
  if (unit === 's' && !base.endsWith('_seconds')) base += '_seconds'
  return kind === 'counter' ? `${base}_total` : base
}

/** `{a="1",b="x"}`, keys sorted, values escaped as the text format wants; '' without attributes. */
function labelsOf(attributes: Attributes | undefined): string {
  if (attributes === undefined) return ''
  const pairs = Object.keys(attributes)
    .filter((key) => attributes[key] !== undefined)
    .sort()
    .map((key) => {
      const value = String(attributes[key]).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
      return `${key.replace(/[^A-Za-z0-9_]/g, '_')}="${value}"`
    })
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`
}

/** Labels with one more pair: a histogram bucket's `le`. */
function withLabel(labels: string, pair: string): string {
  return labels === '' ? `{${pair}}` : `${labels.slice(0, -1)},${pair}}`
}

/**
 * An OpenTelemetry `MeterProvider` that keeps every series in memory and writes them in the
 * Prometheus text format ({@link PrometheusMeter.text}). Series are kept for the life of the
 * process: the attributes eventwire records are bounded (URLs of the registry, sources of the config).
 */
export class PrometheusMeter implements MeterProvider {
  readonly #families = new Map<string, Family>()
  readonly #batches = new Set<BatchCallback>()
  readonly #meter: Meter

  constructor() {
    const family = (kind: Kind) => (name: string, options?: InstrumentOptionsOf) => {
      const full = prometheusName(name, options?.unit, kind)
      let found = this.#families.get(full)
      if (found === undefined) {
        found = new Family(full, kind, options?.description ?? name, options?.advice?.explicitBucketBoundaries)
        this.#families.set(full, found)
      }
      return found
    }
    const sync = (kind: Kind, adds: boolean) => (name: string, options?: InstrumentOptionsOf) => {
      const of = family(kind)(name, options)
      of.adds = adds
      const take = (value: number, attributes?: Attributes) => of.take(value, attributes)
      return { add: take, record: take }
    }
    const observable = (kind: Kind) => (name: string, options?: InstrumentOptionsOf) => {
      const of = family(kind)(name, options)
      of.observable = true
      // What a callback observes is the value now, of a counter as of a gauge.
      of.adds = false
      return {
        family: of,
        addCallback: (callback: SingleCallback) => of.callbacks.add(callback),
        removeCallback: (callback: SingleCallback) => of.callbacks.delete(callback),
      }
    }
    this.#meter = {
      createCounter: sync('counter', true),
      createUpDownCounter: sync('gauge', true),
      createHistogram: sync('histogram', true),
      createGauge: sync('gauge', false),
      createObservableCounter: observable('counter'),
      createObservableUpDownCounter: observable('gauge'),
      createObservableGauge: observable('gauge'),
      addBatchObservableCallback: (callback: BatchCallback) => this.#batches.add(callback),
      removeBatchObservableCallback: (callback: BatchCallback) => this.#batches.delete(callback),
    } as unknown as Meter
  }

  getMeter(): Meter {
    return this.#meter
  }

  /** Runs the observable callbacks, then writes every series out. */
  async text(): Promise<string> {
    // A URL or destination gone since the last scrape is not written again.
    for (const family of this.#families.values()) if (family.observable) family.series.clear()
    const observed: Promise<unknown>[] = []
    const observe = (family: Family) => (value: number, attributes?: Attributes) => family.take(value, attributes)
    for (const batch of this.#batches)
      observed.push(
        Promise.resolve().then(() =>
          batch({
            observe: (instrument: unknown, value: number, attributes?: Attributes) =>
              observe((instrument as { family: Family }).family)(value, attributes),
          } as Parameters<BatchCallback>[0]),
        ),
      )
    for (const family of this.#families.values())
      for (const callback of family.callbacks)
        observed.push(Promise.resolve().then(() => callback({ observe: observe(family) })))
    // A callback that throws leaves its series as they were; the others are written.
    await Promise.allSettled(observed)
    const lines: string[] = []
    for (const family of this.#families.values()) {
      if (family.series.size === 0) continue
      lines.push(`# HELP ${family.name} ${family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`)
      lines.push(`# TYPE ${family.name} ${family.kind}`)
      for (const { labels, value, buckets, sum } of family.series.values()) {
        if (buckets === undefined) {
          lines.push(`${family.name}${labels} ${value}`)
          continue
        }
        for (const [index, bound] of family.bounds.entries())
          lines.push(`${family.name}_bucket${withLabel(labels, `le="${bound}"`)} ${buckets[index]}`)
        lines.push(`${family.name}_bucket${withLabel(labels, 'le="+Inf"')} ${value}`)
        lines.push(`${family.name}_sum${labels} ${sum}`)
        lines.push(`${family.name}_count${labels} ${value}`)
      }
    }
    return `${lines.join('\n')}\n`
  }
}
