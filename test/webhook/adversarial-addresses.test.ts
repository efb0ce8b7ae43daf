import { BlockList, isIP } from 'node:net'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseIpAddress } from '../../src/core/ip-address.js'
import { blockedRangeOf, isPrivateAddress } from '../../src/core/private-address.js'
import { resolveWebhookSettings } from '../../src/webhook/delivery/settings.js'
import { OptionsError } from '../../src/webhook/index.js'

// The ranges blockPrivateNetworks refuses, written out again as the specification (IANA's IPv4 and
// IPv6 special-purpose registries, multicast, site-local), for node:net's BlockList to judge by.
const V4_BLOCKED = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
]
const V6_BLOCKED = [
  '::/96',
  '64:ff9b:1::/48',
  '100::/64',
  '100:0:0:1::/64',
  '2001::/23',
  '2001:db8::/32',
  '3fff::/20',
  '5f00::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
]

/** node:net's BlockList with the specification's ranges, and each IPv4 range again inside every IPv6 prefix that embeds IPv4. */
function oracle(): BlockList {
  const list = new BlockList()
  for (const cidr of V6_BLOCKED) {
    const [address = '', bits] = cidr.split('/')
    list.addSubnet(address, Number(bits), 'ipv6')
  }
  for (const cidr of V4_BLOCKED) {
    const [address = '', bits] = cidr.split('/')
    const prefix = Number(bits)
    // BlockList itself matches ::ffff:a.b.c.d against IPv4 rules.
    list.addSubnet(address, prefix, 'ipv4')
    const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number)
    const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
    list.addSubnet(`::ffff:0:${hex}`, 96 + prefix, 'ipv6')
    list.addSubnet(`64:ff9b::${hex}`, 96 + prefix, 'ipv6')
    list.addSubnet(`2002:${hex}::`, 16 + prefix, 'ipv6')
  }
  return list
}
const blockList = oracle()

/** Full, uncompressed text of 16 bytes. */
function fullV6(bytes: Uint8Array): string {
  return Array.from({ length: 8 }, (_, index) =>
    (((bytes[index * 2] ?? 0) << 8) | (bytes[index * 2 + 1] ?? 0)).toString(16),
  ).join(':')
}

const byte = fc.integer({ min: 0, max: 255 })
/** Zero often, so that `::` runs and the special ranges come up. */
const group = fc.oneof(fc.constant(0), fc.constant(0xffff), fc.integer({ min: 0, max: 0xffff }))
/** Prefixes of the ranges that matter, so that a run lands in and near them. */
const prefix = fc.constantFrom<number[]>(
  [],
  [0, 0, 0, 0, 0, 0xffff],
  [0, 0, 0, 0, 0xffff, 0],
  [0x64, 0xff9b, 0, 0, 0, 0],
  [0x64, 0xff9b, 1],
  [0x2002],
  [0x2001, 0],
  [0x2001, 0xdb8],
  [0xfe80],
  [0xfec0],
  [0xff02],
  [0xfd00],
  [0x100, 0, 0, 0],
  [0x100, 0, 0, 1],
  [0x3fff],
  [0x5f00],
  [0x2600],
)

const ipv4Text = fc.tuple(byte, byte, byte, byte).map((parts) => parts.join('.'))

/** IPv6 text in every legal spelling: any `::` run, case, leading zeros, an IPv4 tail, a zone. */
const ipv6Text = fc
  .record({
    start: prefix,
    rest: fc.array(group, { minLength: 8, maxLength: 8 }),
    v4Tail: fc.boolean(),
    upper: fc.boolean(),
    pad: fc.boolean(),
    cut: fc.tuple(fc.nat(8), fc.nat(8)),
    zone: fc.option(fc.constantFrom('eth0', '1', 'en0.5'), { nil: undefined }),
  })
  .map(({ start, rest, v4Tail, upper, pad, cut, zone }) => {
    const groups = [...start, ...rest].slice(0, 8)
    const words = groups.map((value) => {
      const text = value.toString(16)
      return (pad ? text.padStart(4, '0') : text)[upper ? 'toUpperCase' : 'toLowerCase']()
    })
    const [g6 = 0, g7 = 0] = groups.slice(6)
    const tail = v4Tail ? [`${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`] : []
    const body = v4Tail ? words.slice(0, 6) : words
    const limit = body.length + tail.length
    const from = Math.min(cut[0], limit)
    const to = Math.min(limit, from + cut[1])
    const all = [...body, ...tail]
    const text = to > from ? `${all.slice(0, from).join(':')}::${all.slice(to).join(':')}` : all.join(':')
    return zone === undefined ? text : `${text}%${zone}`
  })

/** Near misses: a valid address with one character inserted, replaced or dropped. */
const mutated = fc
  .tuple(
    fc.oneof(ipv4Text, ipv6Text),
    fc.nat(),
    fc.constantFrom('', ':', '::', '.', '0', 'g', '%', '1.2.3.4', '00000', ' ', '[', '-1'),
    fc.constantFrom('insert', 'replace', 'drop'),
  )
  .map(([text, at, piece, how]) => {
    const index = at % (text.length + 1)
    if (how === 'insert') return text.slice(0, index) + piece + text.slice(index)
    if (how === 'replace') return text.slice(0, index) + piece + text.slice(index + 1)
    return text.slice(0, index) + text.slice(index + 1)
  })

describe('parseIpAddress (node:net as the oracle)', () => {
  it('takes exactly the strings node:net calls addresses', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          ipv4Text,
          ipv6Text,
          mutated,
          fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF:.%'.split('')), maxLength: 45 }),
        ),
        (text) => {
          expect(parseIpAddress(text) !== undefined).toBe(isIP(text) !== 0)
        },
      ),
      { numRuns: 5_000 },
    )
  })

  it('reads the bytes node:net reads', () => {
    fc.assert(
      fc.property(fc.oneof(ipv4Text, ipv6Text, mutated), (text) => {
        const bytes = parseIpAddress(text.split('%')[0] ?? '')
        fc.pre(bytes !== undefined)
        const exact = new BlockList()
        const family = bytes.length === 4 ? 'ipv4' : 'ipv6'
        exact.addAddress(text.split('%')[0] ?? '', family)
        expect(exact.check(bytes.length === 4 ? bytes.join('.') : fullV6(bytes), family)).toBe(true)
      }),
      { numRuns: 3_000 },
    )
  })
})

describe('the private-address guard (BlockList with the IANA ranges as the oracle)', () => {
  it('blocks exactly the special-purpose ranges, and IPv6 addresses that embed a blocked IPv4 address', () => {
    fc.assert(
      fc.property(fc.oneof(ipv4Text, ipv6Text), (text) => {
        const plain = text.split('%')[0] ?? ''
        expect(isPrivateAddress(text)).toBe(blockList.check(plain, isIP(plain) === 4 ? 'ipv4' : 'ipv6'))
      }),
      { numRuns: 5_000 },
    )
  })

  it('gives a URL the answer its literal host gets, whatever spelling the URL parser rewrites it to', () => {
    fc.assert(
      fc.property(
        ipv6Text.filter((text) => !text.includes('%')),
        (text) => {
          const url = `http://[${text}]:8080/in`
          const blocked = isPrivateAddress(text)
          expect(isPrivateAddress(new URL(url).hostname)).toBe(blocked)
          const build = () => resolveWebhookSettings({ webhooks: [{ url }], blockPrivateNetworks: true })
          if (blocked) expect(build).toThrow(OptionsError)
          else expect(build).not.toThrow()
        },
      ),
      { numRuns: 1_000 },
    )
  })

  it.each([
    ['http://[::ffff:127.0.0.1]:8080/', '127.0.0.0/8'],
    ['http://[::ffff:169.254.169.254]/latest/meta-data', '169.254.0.0/16'],
    ['http://[::ffff:10.0.0.1]/', '10.0.0.0/8'],
    ['http://[::127.0.0.1]/', '::/96'],
    ['http://[64:ff9b::127.0.0.1]/', '127.0.0.0/8'],
    ['http://[64:ff9b:1::8.8.8.8]/', '64:ff9b:1::/48'],
    ['http://[2002:a9fe:a9fe::1]/', '169.254.0.0/16'],
    ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', '2001::/23'],
    ['http://[fec0::1]/', 'fec0::/10'],
    ['http://[ff02::1]/', 'ff00::/8'],
    ['http://[100::1]/', '100::/63'],
    ['http://198.18.0.1/', '198.18.0.0/15'],
    ['http://224.0.0.1/', '224.0.0.0/4'],
    ['http://255.255.255.255/', '240.0.0.0/4'],
    ['http://192.0.0.8/', '192.0.0.0/24'],
    ['http://0x7f.1/', '127.0.0.0/8'],
    ['http://2130706433/', '127.0.0.0/8'],
    ['http://127.0.0.1./', '127.0.0.0/8'],
    ['http://017700000001/', '127.0.0.0/8'],
  ])('refuses %s at construction, naming the range', (url, range) => {
    expect(() => resolveWebhookSettings({ webhooks: [{ url }], blockPrivateNetworks: true })).toThrow(range)
  })

  it.each([
    '8.8.8.8',
    '[::ffff:8.8.8.8]',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
    '2606:4700::1111',
    '1.1.1.1',
    '192.0.3.1',
    '198.20.0.1',
  ])('lets the public address %s through', (address) => {
    expect(blockedRangeOf(address)).toBeUndefined()
  })

  it.each(['example.com', '1.2.3', '01.2.3.4', '[::1', '::1]', '1::2::3', '1:2:3:4:5:6:7::8::', '', '::ffff:1.2.3.04'])(
    '%s is not an address: not judged here',
    (text) => {
      expect(parseIpAddress(text)).toBeUndefined()
    },
  )
})

describe('IPv4 parts: 0 to 255, written in decimal', () => {
  it.each(['0.0.0.0', '255.255.255.255', '1.22.199.250', '::ffff:255.255.255.255'])(
    '%s is an address: every part is within 0 to 255',
    (text) => {
      expect(parseIpAddress(text)).toBeDefined()
    },
  )

  it.each([
    '256.0.0.1',
    '1.2.3.256',
    '999.999.999.999',
    '10.0.0.300',
    '127.0.0.256',
    '::ffff:127.0.0.256',
    '1.2.3.4.5',
    '1.2.3.',
    '1.2.3.1000',
  ])('%s is not an address: a part over 255 or out of place is not wrapped or guessed at', (text) => {
    expect(parseIpAddress(text)).toBeUndefined()
    expect(isPrivateAddress(text)).toBe(false)
  })

  it('reads each part into its own byte, in order', () => {
    expect([...(parseIpAddress('1.22.199.250') ?? [])]).toEqual([1, 22, 199, 250])
    expect([...(parseIpAddress('::ffff:1.22.199.250') ?? [])]).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 22, 199, 250,
    ])
    expect([...(parseIpAddress('1:23:456:789a:bcde:f0:0:ffff') ?? [])]).toEqual([
      0, 1, 0, 0x23, 0x04, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0, 0xf0, 0, 0, 0xff, 0xff,
    ])
  })
})

describe('blockedRangeOf: a refusal says which range and what it is for', () => {
  it.each([
    ['0.1.2.3', '0.0.0.0/8 ("this network")'],
    ['10.9.8.7', '10.0.0.0/8 (private)'],
    ['100.127.0.1', '100.64.0.0/10 (shared address space)'],
    ['127.0.0.1', '127.0.0.0/8 (loopback)'],
    ['169.254.169.254', '169.254.0.0/16 (link-local, cloud metadata)'],
    ['172.31.0.1', '172.16.0.0/12 (private)'],
    ['192.0.0.9', '192.0.0.0/24 (IETF protocol assignments)'],
    ['192.0.2.1', '192.0.2.0/24 (documentation)'],
    ['192.88.99.1', '192.88.99.0/24 (6to4 relay anycast)'],
    ['192.168.1.1', '192.168.0.0/16 (private)'],
    ['198.19.255.1', '198.18.0.0/15 (benchmarking)'],
    ['198.51.100.1', '198.51.100.0/24 (documentation)'],
    ['203.0.113.1', '203.0.113.0/24 (documentation)'],
    ['239.1.1.1', '224.0.0.0/4 (multicast)'],
    ['255.255.255.255', '240.0.0.0/4 (reserved, limited broadcast)'],
    ['::1', '::/96 (unspecified, loopback, IPv4-compatible)'],
    ['64:ff9b:1::1', '64:ff9b:1::/48 (local-use IPv4/IPv6 translation)'],
    ['100::1:1', '100::/63 (discard-only, dummy prefix)'],
    ['2001:1::1', '2001::/23 (IETF protocol assignments, Teredo)'],
    ['2001:db8::1', '2001:db8::/32 (documentation)'],
    ['3fff:fff::1', '3fff::/20 (documentation)'],
    ['5f00:1::1', '5f00::/16 (segment routing)'],
    ['fd00::1', 'fc00::/7 (unique local)'],
    ['[fe80::1]', 'fe80::/10 (link-local)'],
    ['fec0::1', 'fec0::/10 (site-local)'],
    ['ff02::1', 'ff00::/8 (multicast)'],
    ['::ffff:10.0.0.1', '::ffff:0:0/96 (IPv4-mapped) of 10.0.0.0/8 (private)'],
    ['::ffff:0:127.0.0.1', '::ffff:0:0:0/96 (IPv4-translated) of 127.0.0.0/8 (loopback)'],
    ['64:ff9b::a9fe:a9fe', '64:ff9b::/96 (NAT64) of 169.254.0.0/16 (link-local, cloud metadata)'],
    ['2002:c0a8:101::1', '2002::/16 (6to4) of 192.168.0.0/16 (private)'],
  ])('%s is in %s', (address, range) => {
    expect(blockedRangeOf(address)).toBe(range)
  })

  // Brackets come off only as a pair: a string with one is not an address, whatever is left without it.
  it.each(['110.0.0.1]', '[10.0.0.19', '[::1', '::1]'])('%s, with one bracket, is not an address', (text) => {
    expect(blockedRangeOf(text)).toBeUndefined()
  })
})
