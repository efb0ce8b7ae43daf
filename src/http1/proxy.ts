import { OptionsError } from '../core/errors/options-error.js'
import { addressOf } from './address.js'
import { parseHttpUrl, withoutCredentials } from '../core/option-checks.js'

/** An egress proxy that tunnels with HTTP CONNECT, read once from its URL. */
export interface ProxyAddress {
  /** The proxy's URL without its credentials: what messages name. */
  readonly name: string
  /** The host to connect to: a literal IPv6 address without its brackets. */
  readonly host: string
  readonly port: number
  /** `https:` proxy: the connection to the proxy is TLS too, and the tunnel runs inside it. */
  readonly tls: boolean
  /** `Proxy-Authorization` from the URL's user name and password; `undefined` without them. */
  readonly authorization: string | undefined
}

/** The proxy of each target origin: `undefined` to connect directly. */
export type ProxyRule = (origin: string) => ProxyAddress | undefined

/** Reads a proxy URL: `http://host:port` or `https://host:port`, with `user:password@` for Basic credentials. */
export function proxyAddress(option: string, value: string): ProxyAddress {
  const url = parseHttpUrl(value)
  if (url === undefined)
    throw new OptionsError(
      option,
      `${JSON.stringify(withoutCredentials(value))} is not an http: or https: URL of a proxy.`,
    )
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '')
    throw new OptionsError(option, 'a proxy URL has no path, query or fragment: give only http(s)://host:port.')
  let authorization: string | undefined
  try {
    authorization =
      url.username === '' && url.password === ''
        ? undefined
        : `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
  } catch (cause) {
    throw new OptionsError(option, 'its user name or password is not valid percent-encoding (a % must begin %XX).', {
      cause,
    })
  }
  const { host, port, tls } = addressOf(url)
  return { name: `${url.protocol}//${url.host}`, host, port, tls, authorization }
}

/** One entry of `NO_PROXY`: a host (and all its subdomains), optionally with a port. */
interface Bypass {
  readonly host: string
  readonly port: string | undefined
}

/** Reads `NO_PROXY`: comma- or space-separated hosts, `.example.com` and `example.com` alike, `*` for all. */
function bypassesOf(text: string): Bypass[] | 'all' {
  const bypasses: Bypass[] = []
  // An empty entry (two separators in a row) names no host: its bypass matches nothing.
  for (const entry of text.toLowerCase().split(/[\s,]/)) {
    if (entry === '*') return 'all'
    const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(entry)
    if (match === null) continue
    bypasses.push({ host: (match[1] as string).replace(/^\*?\./, ''), port: match[2] })
  }
  return bypasses
}

function bypassed(bypasses: readonly Bypass[], url: URL): boolean {
  const host = url.hostname.toLowerCase()
  const port = String(addressOf(url).port)
  return bypasses.some(
    (bypass) =>
      (bypass.port === undefined || bypass.port === port) && (host === bypass.host || host.endsWith(`.${bypass.host}`)),
  )
}

/** The first of `names` set to something other than an empty string in `env`. */
function variable(env: Readonly<Record<string, string | undefined>>, ...names: string[]): [string, string] | undefined {
  for (const name of names) {
    const value = env[name]
    if (value !== undefined && value !== '') return [name, value]
  }
  return undefined
}

/**
 * The proxy rule of a setting as the user gave it: every origin through one proxy (a URL), the
 * environment's proxies (`'env'`: `HTTPS_PROXY` for `https:` targets, `HTTP_PROXY` for `http:`
 * ones, lowercase names too and first, as curl reads them, and `NO_PROXY`, read now, once: a
 * variable set later is not seen), or none (`undefined`). A
 * setting that is not a string, or a bad proxy URL, throws {@link OptionsError} naming the option
 * or the variable.
 */
export function proxyRule(
  option: string,
  setting: unknown,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ProxyRule | undefined {
  if (setting === undefined) return undefined
  if (typeof setting !== 'string') throw new OptionsError(option, "must be a proxy URL (http://host:port) or 'env'.")
  if (setting !== 'env') {
    const proxy = proxyAddress(option, setting)
    return () => proxy
  }
  const https = variable(env, 'https_proxy', 'HTTPS_PROXY')
  const http = variable(env, 'http_proxy', 'HTTP_PROXY')
  const forHttps = https && proxyAddress(https[0], https[1])
  const forHttp = http && proxyAddress(http[0], http[1])
  const noProxy = variable(env, 'no_proxy', 'NO_PROXY')
  const bypasses = noProxy === undefined ? [] : bypassesOf(noProxy[1])
  if (bypasses === 'all' || (forHttps === undefined && forHttp === undefined)) return undefined
  return (origin) => {
    const url = new URL(origin)
    if (bypassed(bypasses, url)) return undefined
    return url.protocol === 'https:' ? forHttps : forHttp
  }
}
