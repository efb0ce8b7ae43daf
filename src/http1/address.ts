/** Where an origin is, read once from its URL. */
export interface OriginAddress {
  /** The host to connect to: a literal IPv6 address without its brackets. */
  readonly host: string
  readonly port: number
  readonly tls: boolean
  /** The `host` header: the origin's host and any port it names. */
  readonly hostHeader: string
}

/**
 * Where an origin (or a proxy, or any `http:` or `https:` URL) is: the host to connect to (a
 * literal IPv6 address without its brackets), its port, the scheme's default when it names none,
 * TLS or not, and the `host` header.
 */
export function addressOf(origin: string | URL): OriginAddress {
  const url = typeof origin === 'string' ? new URL(origin) : origin
  const tls = url.protocol === 'https:'
  return {
    // Stryker disable next-line Regex: a hostname holds brackets only around a whole IPv6 address, so either anchor alone matches the same.
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (tls ? 443 : 80) : Number(url.port),
    tls,
    hostHeader: url.host,
  }
}
