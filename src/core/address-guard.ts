import { blockedRangeOf } from './private-address.js'

// `blockPrivateNetworks` as every webhook transport applies it: the refusal of an address that is
// not on the public internet, and the error it fails with. The fetch transport can check only a
// literal address in the URL; the Node ones also check each address a name resolves to
// (public-lookup.ts) or, with a connector of the user's, the address its socket reached.

/** The code every refusal of the guard carries, for `classifyFailure`. */
export const BLOCKED_ADDRESS_CODE = 'ERR_EVENTWIRE_BLOCKED_ADDRESS'

/** The error a transport refuses a non-public address with: `subject` is the address, or the name and what it resolves to. */
function blockedAddressError(subject: string, range: string): Error {
  return Object.assign(
    new Error(`${subject} is in ${range}, not the public internet, and blockPrivateNetworks is on`),
    { code: BLOCKED_ADDRESS_CODE },
  )
}

/**
 * The refusal of `address` (an IP address, or a host name, which is never refused here) when it is
 * not public: an error naming `subject` (the address itself, or the name and what it resolved to)
 * and the range; `undefined` for a public address or a name.
 */
export function refusal(address: string, subject: string = address): Error | undefined {
  const range = blockedRangeOf(address)
  return range === undefined ? undefined : blockedAddressError(subject, range)
}

/**
 * The refusal of the address a socket to `hostname` reached, for a connector that resolves names
 * its own way (or ignores them): only that address can be trusted, and one it does not report is
 * refused too.
 */
export function peerRefusal(hostname: string, address: string | undefined): Error | undefined {
  if (address === undefined)
    return blockedAddressError(`${hostname} (connected to an address the socket does not report)`, 'an unknown address')
  return refusal(address, `${hostname} (connected to ${address})`)
}
