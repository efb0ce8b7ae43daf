import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { startRedis, type RedisOptions, type RedisServer } from './redis.js'
import { isInstalled, REDIS } from './services.js'

/** A test file's own Redis server, and a client that reads and writes its keys as anything with Redis access could. */
export interface RedisForFile {
  /** Whether redis-server is installed; without it the file's Redis suites skip (`describe.runIf`). */
  readonly available: boolean
  /** Set before the file's first test. */
  server: RedisServer
  /** A plain ioredis client of `server`, beside BullMQ's. */
  raw: Redis
}

/**
 * Starts a Redis (by default with the append-only file on, as durability 'strict' requires) and a
 * raw client before a test file's tests, and removes both after them.
 */
export function redisForFile(options: RedisOptions = { persistent: true }): RedisForFile {
  // The server and client are filled in by beforeAll, before any test reads them.
  const redis = { available: isInstalled(REDIS.executable) } as RedisForFile
  beforeAll(async () => {
    if (!redis.available) return
    redis.server = await startRedis(options)
    redis.raw = new Redis({ host: '127.0.0.1', port: redis.server.port })
  })
  afterAll(async () => {
    if (!redis.available) return
    redis.raw.disconnect()
    await redis.server.dispose()
  })
  return redis
}

/** What {@link redisPerTest} gives a test file: Redis servers and things to close, both ended after each test. */
export interface RedisPerTest {
  /** Closed after each test, before the servers stop. */
  readonly open: Array<{ close(): Promise<void> }>
  /** Starts a Redis of the test's own, removed after the test. */
  redisWith(options: RedisOptions): Promise<RedisServer>
}

/**
 * For files whose tests each need a Redis of their own settings (persistence, a replica, a full
 * one): what a test opens is closed after it, then its servers stop and their folders go.
 */
export function redisPerTest(): RedisPerTest {
  const open: Array<{ close(): Promise<void> }> = []
  const servers: RedisServer[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((item) => item.close()))
    await Promise.all(servers.splice(0).map((server) => server.dispose()))
  })
  return {
    open,
    async redisWith(options) {
      const server = await startRedis(options)
      servers.push(server)
      return server
    },
  }
}
