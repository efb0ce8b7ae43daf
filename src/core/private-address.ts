import { parseIpAddress } from './ip-address.js'

interface Range {
  readonly bytes: Uint8Array
  readonly bits: number
  /** CIDR text and what the range is, for messages. */
  readonly name: string
}

function range(cidr: string, what: string): Range {
  const [address, bits] = cidr.split('/') as [string, string]
  const bytes = parseIpAddress(address)
  // Stryker disable next-line all: a guard on the tables below, which every test loads; no test can reach it.
  if (!bytes) throw new Error(`not an address: ${cidr}`)
  return { bytes, bits: Number(bits), name: `${cidr} (${what})` }
}

/**
 * IPv4 ranges that are not the public internet: IANA's IPv4 Special-Purpose Address Registry
 * (whole blocks, even where a single address in one is globally reachable), multicast and the
 * reserved 240/4, which holds the limited broadcast address.
 */
const BLOCKED_V4: readonly Range[] = [
  range('0.0.0.0/8', '"this network"'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'shared address space'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local, cloud metadata'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'IETF protocol assignments'),
  range('192.0.2.0/24', 'documentation'),
  range('192.88.99.0/24', '6to4 relay anycast'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved, limited broadcast'),
]

/**
 * IPv6 ranges that are not the public internet (IANA's IPv6 Special-Purpose Address Registry,
 * plus multicast and the deprecated site-local range). `::/96` holds `::`, `::1` and the
 * deprecated IPv4-compatible addresses; `2001::/23` holds Teredo (`2001::/32`), whose client
 * address is obfuscated, and a few anycast services no webhook receiver runs on.
 */
const BLOCKED_V6: readonly Range[] = [
  range('::/96', 'unspecified, loopback, IPv4-compatible'),
  range('64:ff9b:1::/48', 'local-use IPv4/IPv6 translation'),
  range('100::/63', 'discard-only, dummy prefix'),
  range('2001::/23', 'IETF protocol assignments, Teredo'),
  range('2001:db8::/32', 'documentation'),
  range('3fff::/20', 'documentation'),
  range('5f00::/16', 'segment routing'),
  range('fc00::/7', 'unique local'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'site-local'),
  range('ff00::/8', 'multicast'),
]

/** IPv6 prefixes whose addresses carry an IPv4 address at `at`, and are judged by it. */
const EMBEDDING_V6: ReadonlyArray<readonly [Range, number]> = [
  [range('::ffff:0:0/96', 'IPv4-mapped'), 12],
  [range('::ffff:0:0:0/96', 'IPv4-translated'), 12],
  [range('64:ff9b::/96', 'NAT64'), 12],
  [range('2002::/16', '6to4'), 2],
]

/** Whether `bytes` fall in `outer`, an address of the same family (the callers only pair those). */
function contains(outer: Range, bytes: Uint8Array): boolean {
  // Stryker disable next-line EqualityOperator: a turn past the prefix has a zero mask and compares nothing.
  for (let bit = 0; bit < outer.bits; bit += 8) {
    const mask = (0xff << (8 - Math.min(8, outer.bits - bit))) & 0xff
    const index = bit / 8
    if (((bytes[index] ?? 0) & mask) !== ((outer.bytes[index] ?? 0) & mask)) return false
  }
  return true
}

/** The blocked range an address (as bytes) falls in, with the embedding that led there. */
function blockedRangeOfBytes(bytes: Uint8Array): string | undefined {
  if (bytes.length === 4) return BLOCKED_V4.find((blocked) => contains(blocked, bytes))?.name
  const direct = BLOCKED_V6.find((blocked) => contains(blocked, bytes))
  if (direct) return direct.name
  for (const [embedding, at] of EMBEDDING_V6) {
    if (!contains(embedding, bytes)) continue
    const inner = blockedRangeOfBytes(bytes.subarray(at, at + 4))
    return inner === undefined ? undefined : `${embedding.name} of ${inner}`
  }
  return undefined
}

/**
 * The range that makes an IP address (v4 or v6, in brackets or not) not public, e.g.
 * `127.0.0.0/8 (loopback)`; `undefined` for a public address or a string that is not an address.
 * Decided on the parsed bytes, so every spelling of an address gets the same answer, and an IPv6
 * address that embeds an IPv4 one (mapped, translated, NAT64, 6to4) is judged by the IPv4 address.
 */
export function blockedRangeOf(address: string): string | undefined {
  const bytes = parseIpAddress(address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address)
  return bytes && blockedRangeOfBytes(bytes)
}

/**
 * Whether an IP address (v4 or v6, brackets allowed) is loopback, private, link-local or otherwise
 * not on the public internet (see {@link blockedRangeOf}). Not an address: `false`.
 */
export function isPrivateAddress(address: string): boolean {
  return blockedRangeOf(address) !== undefined
}
