import type { Attributes, MeterProvider as ApiMeterProvider } from '@opentelemetry/api'
import { expect } from 'vitest'
import { LIBRARY } from '../../src/core/version.js'
import { DataPointType, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics'

/** A reader that exports nothing: the test collects when it wants to look. */
class OnDemandReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve()
  }
}

/** One series of one instrument, as the SDK's reader gives it. */
export interface Point {
  readonly attributes: Attributes
  /** A counter's or gauge's value. */
  readonly value: number
  /** A histogram's count and sum. */
  readonly count: number
  readonly sum: number
  /** A histogram's bucket bounds. */
  readonly boundaries: number[]
}

/** One instrument with its series. */
export interface Collected {
  readonly unit: string
  readonly type: 'sum' | 'gauge' | 'histogram'
  readonly points: Point[]
}

/** An OpenTelemetry SDK meter provider with an in-memory reader, as an application would register one. */
export interface MetricsUnderTest {
  readonly provider: ApiMeterProvider
  /** Every instrument of the `eventwire` scope, by name. */
  collect(): Promise<Map<string, Collected>>
  shutdown(): Promise<void>
}

export function metricsUnderTest(): MetricsUnderTest {
  const reader = new OnDemandReader()
  const provider = new MeterProvider({ readers: [reader] })
  return {
    provider,
    async collect() {
      const { resourceMetrics, errors } = await reader.collect()
      if (errors.length > 0) throw new AggregateError(errors, 'the metric reader reported errors')
      const found = new Map<string, Collected>()
      for (const scope of resourceMetrics.scopeMetrics) {
        if (scope.scope.name !== 'eventwire') continue
        expect(scope.scope.version).toBe(LIBRARY.version)
        for (const metric of scope.metrics) found.set(metric.descriptor.name, collected(metric))
      }
      return found
    },
    shutdown: () => provider.shutdown(),
  }
}

function collected(metric: MetricData): Collected {
  const type =
    metric.dataPointType === DataPointType.HISTOGRAM
      ? 'histogram'
      : metric.dataPointType === DataPointType.SUM
        ? 'sum'
        : 'gauge'
  return {
    unit: metric.descriptor.unit,
    type,
    points: metric.dataPoints.map((point) => {
      const value = point.value as number | { count: number; sum?: number; buckets: { boundaries: number[] } }
      return typeof value === 'number'
        ? { attributes: point.attributes, value, count: 0, sum: 0, boundaries: [] }
        : {
            attributes: point.attributes,
            value: 0,
            count: value.count,
            sum: value.sum ?? 0,
            boundaries: value.buckets.boundaries,
          }
    }),
  }
}

/** The series of `metric` whose attributes include every one of `match`. */
export function pointsOf(metric: Collected | undefined, match: Attributes = {}): Point[] {
  return (metric?.points ?? []).filter((point) =>
    Object.entries(match).every(([key, value]) => point.attributes[key] === value),
  )
}

/** The one series of `metric` matching `match`; throws when there is not exactly one. */
export function pointOf(metric: Collected | undefined, match: Attributes = {}): Point {
  const points = pointsOf(metric, match)
  if (points.length !== 1)
    throw new Error(`expected one series matching ${JSON.stringify(match)}, found ${points.length}`)
  return points[0] as Point
}
