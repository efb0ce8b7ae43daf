import { Queue, Worker, type Job } from 'bullmq'
import { StoredJob } from './stored-job.js'

/** A BullMQ queue that reads jobs with {@link StoredJob}: a job whose data is not JSON does not make a listing throw. */
export class StoredJobQueue<Data> extends Queue<Data> {
  protected override get Job(): typeof Job {
    return StoredJob
  }
}

/** A BullMQ worker that reads jobs with {@link StoredJob}: a job whose data is not JSON reaches the processor, which fails it. */
export class StoredJobWorker<Data> extends Worker<Data> {
  protected override get Job(): typeof Job {
    return StoredJob
  }
}
