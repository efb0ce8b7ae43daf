/** IPv4 ranges that are not the public internet: this host, private networks, link-local, CGNAT. */
const PRIVATE_V4: ReadonlyArray<readonly [number, number]> = [
  [0x00000000, 8], // 0.0.0.0/8 "this network"
  [0x0a000000, 8], // 10/8
  [0x64400000, 10], // 100.64/10 shared address space
  [0x7f000000, 8], // 127/8 loopback
  [0xa9fe0000, 16], // 169.254/16 link-local (cloud metadata lives here)
  [0xac100000, 12], // 172.16/12
  [0xc0a80000, 16], // 192.168/16
]

function v4ToNumber(address: string): number | undefined {
  const parts = address.split('.')
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined
    value = value * 256 + Number(part)
  }
  return value
}

/**
 * Whether an IP address (v4 or v6, brackets allowed) is loopback, private, link-local or otherwise
 * not on the public internet. Not an address: `false`.
 */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '').toLowerCase()
  const v4 = v4ToNumber(ip)
  if (v4 !== undefined) return PRIVATE_V4.some(([base, bits]) => v4 >>> (32 - bits) === base >>> (32 - bits))
  if (!ip.includes(':')) return false
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip)
  if (mapped?.[1]) return isPrivateAddress(mapped[1])
  if (ip === '::' || ip === '::1') return true
  const first = Number.parseInt(ip.split(':')[0] || '0', 16)
  // fc00::/7 unique local, fe80::/10 link-local
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80
}
