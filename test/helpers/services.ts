import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/** A system program some suites need because the real thing is the point of them. */
export interface SystemService {
  readonly executable: string
  /** The one command that installs it on Debian and Ubuntu. */
  readonly install: string
  /** The suites that are skipped without it. */
  readonly suites: readonly string[]
}

/** Redis: the BullMQ adapter is tested against a real server, started by the tests themselves. */
export const REDIS: SystemService = {
  executable: 'redis-server',
  install: 'sudo apt-get install -y redis-server',
  suites: [
    'test/webhook/bullmq.test.ts',
    'test/webhook/bullmq-processes.test.ts',
    'test/webhook/durability.test.ts',
    'test/webhook/adversarial-redis.test.ts',
    'test/webhook/event-rules.test.ts (the queue half)',
    'test/webhook/job-format.test.ts (the Redis half)',
    'test/bench-smoke.test.ts (the durable part)',
    'test/webhook/bullmq-cluster.test.ts',
    'test/webhook/replica-ack.test.ts',
    'test/webhook/shared-breakers.test.ts',
    'test/webhook/shared-rates.test.ts (the Redis half)',
    'test/webhook/bullmq-isolation.test.ts',
    'test/webhook/enqueue-status.test.ts',
    'test/webhook/metrics.test.ts (the BullMQ half)',
    'test/webhook/redis-faults.test.ts',
    'test/webhook/redis-refused.test.ts',
    'test/webhook/destinations.test.ts',
  ],
}

/** redis-cli, which joins the nodes of the Redis Cluster the cluster suite starts (`redis-cli --cluster create`). */
export const REDIS_CLI: SystemService = {
  executable: 'redis-cli',
  install: 'sudo apt-get install -y redis-tools',
  suites: ['test/webhook/bullmq-cluster.test.ts'],
}

/** Every service `npm test` can use. */
export const SERVICES: readonly SystemService[] = [REDIS, REDIS_CLI]

/** Whether `executable` is on the PATH and may be run. */
export function isInstalled(executable: string): boolean {
  return (process.env['PATH'] ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, executable), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}
