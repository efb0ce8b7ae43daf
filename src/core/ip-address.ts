/** One dotted-decimal part: 0 to 255, no leading zeros (an octal-looking part is not guessed at). */
const V4_PART = /^(?:0|[1-9]\d{0,2})$/
const V6_GROUP = /^[0-9A-Fa-f]{1,4}$/
/** A zone index (`fe80::1%eth0`), as DNS answers for link-local addresses carry it. */
const ZONE = /^%[0-9A-Za-z.:-]+$/

function parseV4(text: string): Uint8Array | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  const bytes = new Uint8Array(4)
  for (const [index, part] of parts.entries()) {
    if (!V4_PART.test(part) || Number(part) > 255) return undefined
    bytes[index] = Number(part)
  }
  return bytes
}

function parseV6(text: string): Uint8Array | undefined {
  const zoneAt = text.indexOf('%')
  if (zoneAt !== -1 && !ZONE.test(text.slice(zoneAt))) return undefined
  const halves = (zoneAt === -1 ? text : text.slice(0, zoneAt)).split('::')
  if (halves.length > 2) return undefined
  // `split` gives at least one part, so there is always a head.
  const [head, tail = []] = halves.map((half) => (half === '' ? [] : half.split(':'))) as [string[], string[]?]
  // An IPv4 address may stand for the last 32 bits, and only there.
  const last = halves.length === 2 ? tail : head
  const lastGroup = last.at(-1)
  let v4: Uint8Array | undefined
  if (lastGroup?.includes('.')) {
    last.pop()
    v4 = parseV4(lastGroup)
    if (!v4) return undefined
  }
  const words = head.length + tail.length + (v4 ? 2 : 0)
  // `::` stands for one or more zero groups.
  if (halves.length === 2 ? words > 7 : words !== 8) return undefined
  if (![...head, ...tail].every((group) => V6_GROUP.test(group))) return undefined
  const bytes = new Uint8Array(16)
  const put = (group: string, index: number) => {
    const value = Number.parseInt(group, 16)
    bytes[index * 2] = value >> 8
    bytes[index * 2 + 1] = value & 0xff
  }
  for (const [index, group] of head.entries()) put(group, index)
  const tailStart = 8 - tail.length - (v4 ? 2 : 0)
  for (const [index, group] of tail.entries()) put(group, tailStart + index)
  if (v4) bytes.set(v4, 12)
  return bytes
}

/**
 * The bytes of an IP address written as text: 4 for IPv4 (dotted decimal, as URLs and DNS answers
 * write it), 16 for IPv6 (RFC 4291 text: `::`, an IPv4 tail, a zone index). Anything else,
 * brackets included, is `undefined`.
 */
export function parseIpAddress(text: string): Uint8Array | undefined {
  return text.includes(':') ? parseV6(text) : parseV4(text)
}
