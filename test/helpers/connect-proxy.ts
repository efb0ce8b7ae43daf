import { createServer, type IncomingMessage, type Server } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import { connect as connectTcp, type Socket } from 'node:net'

/** What the test proxy does with a CONNECT. */
export type ProxyBehaviour =
  | {
      readonly kind: 'tunnel'
      readonly password?: string
      /** What it answers before tunnelling (a 200 by default); `split`: one byte per write. */
      readonly answer?: string
      readonly split?: boolean
    }
  | { readonly kind: 'refuse'; readonly status: number }
  | { readonly kind: 'raw'; readonly answer: string }
  | { readonly kind: 'silent' }

export interface TestProxy {
  readonly url: string
  /** The authority of each CONNECT, and its Proxy-Authorization. */
  readonly connects: Array<{ authority: string; authorization: string | undefined }>
  /** The TLS server name (SNI) each client of an `https:` proxy sent, `false` for none. */
  readonly servernames: Array<string | false>
  /** Clients' connections open now. */
  openConnections(): number
  close(): Promise<void>
}

/**
 * An HTTP CONNECT proxy on 127.0.0.1, written here: it tunnels, refuses, or answers what it is
 * told. With `tls`, clients reach it over TLS (an `https:` proxy).
 */
export async function startConnectProxy(
  behaviour: ProxyBehaviour,
  tls?: { key: string; cert: string },
): Promise<TestProxy> {
  const connects: TestProxy['connects'] = []
  const servernames: TestProxy['servernames'] = []
  const sockets = new Set<Socket>()
  const clients = new Set<Socket>()
  const refuseOthers = (_request: IncomingMessage, response: import('node:http').ServerResponse) =>
    response.writeHead(405).end()
  const server: Server = tls ? createTlsServer(tls, refuseOthers) : createServer(refuseOthers)
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    clients.add(socket)
    socket.on('close', () => {
      sockets.delete(socket)
      clients.delete(socket)
    })
  })
  server.on('secureConnection', (socket: Socket & { servername?: string | false }) =>
    servernames.push(socket.servername ?? false),
  )
  server.on('connect', (request: IncomingMessage, client: Socket) => {
    const authority = request.url ?? ''
    const authorization = request.headers['proxy-authorization']
    connects.push({ authority, authorization })
    client.on('error', () => undefined)
    // Read on, so that the client's end is seen (a socket handed to 'connect' is paused), and end
    // too (an HTTP server's sockets are half-open: they would wait for the proxy's own end).
    client.resume()
    client.on('end', () => client.end())
    if (behaviour.kind === 'silent') return
    if (behaviour.kind === 'raw') {
      client.write(behaviour.answer)
      return
    }
    if (behaviour.kind === 'refuse') {
      client.end(`HTTP/1.1 ${behaviour.status} Nope\r\ncontent-length: 0\r\n\r\n`)
      return
    }
    if (
      behaviour.password !== undefined &&
      authorization !== `Basic ${Buffer.from(`user:${behaviour.password}`).toString('base64')}`
    ) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\ncontent-length: 0\r\n\r\n')
      return
    }
    const [host, port] = [
      authority.slice(0, authority.lastIndexOf(':')),
      authority.slice(authority.lastIndexOf(':') + 1),
    ]
    const upstream = connectTcp({ host: host.replace(/^\[(.*)\]$/, '$1'), port: Number(port) })
    sockets.add(upstream)
    upstream.on('error', () => client.destroy())
    upstream.once('connect', () => {
      const answer = behaviour.answer ?? 'HTTP/1.1 200 Connection Established\r\n\r\n'
      if (behaviour.split) for (const byte of Buffer.from(answer)) client.write(Buffer.of(byte))
      else client.write(answer)
      upstream.pipe(client)
      client.pipe(upstream)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  const proxy: TestProxy = {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    connects,
    servernames,
    openConnections: () => clients.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
  return proxy
}
