import { Job, type JobJson, type JobProgress } from 'bullmq'
import { jobDataProblem } from './job-data.js'

/** Characters of unparsable data kept: enough to recognize it, never megabytes in a failure reason. */
const EXCERPT_CHARS = 200

const excerpt = (text: string): string => (text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text)

/** Job data that is not JSON: kept as an excerpt, so the worker can fail the job and the operator can see it. */
export class UnparsableJobData {
  /** The parser's complaint. */
  readonly problem: string
  /** The start of what Redis holds. */
  readonly excerpt: string

  constructor(problem: string, raw: string) {
    this.problem = excerpt(problem)
    this.excerpt = excerpt(raw)
  }
}

/**
 * A BullMQ job that can be read whatever Redis holds. BullMQ parses a job's data with
 * `JSON.parse` and throws: in a worker that leaves the job active until its lock expires, then
 * stalled, then active again, forever; in `getFailed` it throws for the whole page. Here data
 * that is not JSON becomes {@link UnparsableJobData}, which the worker fails once and
 * `deadLetters()` lists.
 */
// The type parameters mirror Job's, so that this class can stand in for it (`typeof Job`).
export class StoredJob<
  // biome-ignore lint/suspicious/noExplicitAny: Job's own defaults, so that StoredJob stands in for it.
  Data = any,
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  Result = any,
  Name extends string = string,
  Progress extends JobProgress = JobProgress,
> extends Job<Data, Result, Name, Progress> {
  static override fromJSON<T = unknown, R = unknown, N extends string = string>(
    queue: Parameters<typeof Job.fromJSON>[0],
    json: JobJson,
    jobId?: string,
  ): Job<T, R, N> {
    // `super`, not `Job`: Job.fromJSON builds `new this(...)`, which must stay a StoredJob.
    try {
      // biome-ignore lint/complexity/noThisInStatic: see above.
      return super.fromJSON<T, R, N>(queue, json, jobId)
    } catch (error) {
      // biome-ignore lint/complexity/noThisInStatic: see above.
      const job = super.fromJSON<T, R, N>(queue, { ...json, data: 'null' }, jobId)
      job.data = new UnparsableJobData((error as Error).message, String(json.data)) as T
      return job
    }
  }
}

/** Why a job's data cannot be read as an eventwire job, or `undefined` when it can. */
export function unreadableReason(job: Job): string | undefined {
  if (job.data instanceof UnparsableJobData)
    return `its data is not JSON (${job.data.problem}): ${JSON.stringify(job.data.excerpt)}`
  const problem = jobDataProblem(job.id, job.data)
  return problem === undefined ? undefined : `it is not an eventwire job: ${problem}`
}
