import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { refusal } from '../core/address-guard.js'

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** `dns.lookup`, refusing every answer that contains a non-public address (checked after resolution, so DNS tricks do not get through). */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '')
    for (const entry of addresses) {
      const refused = refusal(entry.address, `${hostname} resolves to ${entry.address}`)
      if (refused !== undefined) return callback(refused, '')
    }
    const [first] = addresses
    if (options.all) callback(null, addresses)
    else if (first) callback(null, first.address, first.family)
    else callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '')
  })
}
