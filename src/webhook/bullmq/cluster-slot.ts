// Where a queue's keys live on a Redis Cluster: the hash tag of its prefix, and the slot of that tag.

/**
 * The hash tag Redis Cluster hashes for keys that start with `prefix`: what lies between the
 * first `{` and the first `}` after it, when that is not empty. `undefined` otherwise: each key
 * is then hashed whole, and a queue's keys land in different slots.
 */
export function hashTagOf(prefix: string): string | undefined {
  const open = prefix.indexOf('{')
  if (open === -1) return undefined
  const close = prefix.indexOf('}', open + 1)
  return close > open + 1 ? prefix.slice(open + 1, close) : undefined
}

/** CRC16-CCITT (XMODEM), the checksum Redis Cluster takes modulo 16384, one table entry per byte. */
const TABLE = (() => {
  const table = new Uint16Array(256)
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1
    table[byte] = crc & 0xffff
  }
  return table
})()

/** The cluster slot (0 to 16383) of a key whose hash tag is `tag`, as Redis computes it. */
export function slotOf(tag: string): number {
  let crc = 0
  for (const byte of new TextEncoder().encode(tag))
    crc = ((crc << 8) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number)) & 0xffff
  return crc % 16_384
}

/** One ioredis connection to one Redis server: a standalone client, or one node of a cluster. */
export interface NodeConnection {
  /** ioredis's socket: another object after a reconnect. */
  readonly stream?: unknown
  readonly options?: { readonly host?: string; readonly port?: number }
  call(command: string, ...args: Array<string | number>): Promise<unknown>
}

/** An ioredis `Cluster`, as far as finding a slot's master goes. */
interface ClusterConnection {
  readonly isCluster: true
  /** Slot to node keys (`host:port`), the master first. */
  readonly slots: ReadonlyArray<readonly string[] | undefined>
  nodes(role: 'master'): NodeConnection[]
}

function isCluster(connection: unknown): connection is ClusterConnection {
  return (connection as { isCluster?: unknown }).isCluster === true
}

/** `host:port` of the master that holds `slot`, as the cluster connection last heard; `undefined` for a standalone connection. */
export function masterKeyOf(connection: unknown, slot: number | undefined): string | undefined {
  if (!isCluster(connection) || slot === undefined) return undefined
  return connection.slots[slot]?.[0]
}

/**
 * The connection that reads and writes the queue's keys: the connection itself, or on a cluster
 * its pooled connection to the master holding `slot` (the one ioredis sends those commands on);
 * `undefined` while the cluster does not know that master.
 */
export function nodeHolding(connection: unknown, slot: number | undefined): NodeConnection | undefined {
  if (!isCluster(connection)) return connection as NodeConnection
  const master = masterKeyOf(connection, slot)
  if (master === undefined) return undefined
  return connection.nodes('master').find((node) => `${node.options?.host}:${node.options?.port}` === master)
}

/** The slot of the keys of a queue with `prefix`; `undefined` without a hash tag. */
export function slotOfPrefix(prefix: string): number | undefined {
  const tag = hashTagOf(prefix)
  return tag === undefined ? undefined : slotOf(tag)
}
