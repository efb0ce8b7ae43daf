import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { freePort } from './ports.js'
import { startRedis, type RedisServer } from './redis.js'

const run = promisify(execFile)

/** One redis-server of a {@link RedisCluster}. */
export interface ClusterNode {
  readonly server: RedisServer
  readonly port: number
  /** `host:port`, as CLUSTER NODES and ioredis name it. */
  readonly key: string
}

/** A Redis Cluster on 127.0.0.1: three masters with a replica each, started by a test. */
export interface RedisCluster {
  readonly nodes: readonly ClusterNode[]
  /** Where an ioredis `Cluster` starts. */
  readonly startupNodes: ReadonlyArray<{ host: string; port: number }>
  /** The node holding `slot` as master now, by what a live node says. */
  masterOf(slot: number): Promise<ClusterNode>
  /** The live node that replicates `master` now. */
  replicaOf(master: ClusterNode): Promise<ClusterNode>
  /** Sends one command to `node` on a connection of its own. */
  command(node: ClusterNode, ...args: string[]): Promise<unknown>
  /** Resolves once every live node says cluster_state:ok and every live replica's link to its master is up. */
  settled(timeoutMs?: number): Promise<void>
  /** Stops every node and removes their directories. */
  dispose(): Promise<void>
}

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** How long a node may be unreachable before it counts as failed (ms): the failover's pace. @defaultValue 1000 */
  nodeTimeoutMs?: number
}

/** A port whose port + 10,000 is not what it takes: the bus port is given explicitly. */
async function ports(count: number): Promise<number[]> {
  const taken = new Set<number>()
  while (taken.size < count) taken.add(await freePort())
  return [...taken]
}

async function command(port: number, ...args: string[]): Promise<unknown> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  try {
    await client.connect()
    return await client.call(args[0] as string, ...args.slice(1))
  } finally {
    client.disconnect()
  }
}

function isRunning(node: ClusterNode): boolean {
  return node.server.running()
}

/**
 * Starts six redis-servers with `--cluster-enabled yes` and the append-only file on, each in its
 * own directory, joins them with `redis-cli --cluster create ... --cluster-replicas 1` (Debian's
 * `redis-tools`, which `redis-server` depends on), and waits until the cluster is ok.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const [clientPorts, busPorts] = await (async () => {
    const all = await ports(12)
    return [all.slice(0, 6), all.slice(6)]
  })()
  const nodes: ClusterNode[] = []
  try {
    for (const [index, port] of clientPorts.entries()) {
      const server = await startRedis({
        persistent: true,
        appendfsync: 'everysec',
        port,
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPorts[index]),
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          String(options.nodeTimeoutMs ?? 1_000),
          // A replica takes over however long it was cut off from its master: the tests kill masters.
          '--cluster-replica-validity-factor',
          '0',
          // A replica's first sync at once (Redis waits 5 s for more replicas by default), and a
          // stop that does not wait for replicas to catch up (up to 10 s by default).
          '--repl-diskless-sync-delay',
          '0',
          '--shutdown-timeout',
          '0',
          // A replica refuses SIGTERM while it writes its first AOF after a sync ("Writing initial AOF, can't exit").
          '--shutdown-on-sigterm',
          'force',
        ],
      })
      nodes.push({ server, port, key: `127.0.0.1:${port}` })
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((node) => node.key),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ])
  } catch (error) {
    await Promise.all(nodes.map((node) => node.server.dispose()))
    throw error
  }

  const settled = async (timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const states = await Promise.all(
        nodes.filter(isRunning).map(async (node) => {
          try {
            const info = String(await command(node.port, 'CLUSTER', 'INFO'))
            const replication = String(await command(node.port, 'INFO', 'replication'))
            return info.includes('cluster_state:ok') && !replication.includes('master_link_status:down')
          } catch {
            return false
          }
        }),
      )
      if (states.every(Boolean)) return
      if (Date.now() > deadline) throw new Error(`the Redis cluster did not settle within ${timeoutMs} ms`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  await settled()

  return {
    nodes,
    startupNodes: nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
    settled,
    async masterOf(slot) {
      for (const node of nodes.filter(isRunning)) {
        try {
          const ranges = (await command(node.port, 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>
          const range = ranges.find(([first, last]) => first <= slot && slot <= last)
          const owner = nodes.find((candidate) => candidate.port === range?.[2][1])
          if (owner) return owner
        } catch {
          // A node that is going down: ask the next.
        }
      }
      throw new Error(`no live node knows who holds slot ${slot}`)
    },
    async replicaOf(master) {
      for (const node of nodes.filter(isRunning)) {
        const replication = String(await command(node.port, 'INFO', 'replication'))
        if (replication.includes('role:slave') && replication.includes(`master_port:${master.port}\r`)) return node
      }
      throw new Error(`no live node replicates ${master.key}`)
    },
    command: (node, ...args) => command(node.port, ...args),
    async dispose() {
      await Promise.all(nodes.map((node) => node.server.dispose()))
    },
  }
}
