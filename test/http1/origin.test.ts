// One origin's connections on the HTTP/1.1 transport, against real servers on 127.0.0.1: the idle
// connections its URLs share, the pools it keeps per URL and forgets once many have come, where it
// connects, and the name it gives TLS.
import { createServer as createHttpServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ENTRIES_BEFORE_SWEEP } from '../../src/core/swept-map.js'
import { Http1Attempt } from '../../src/http1/attempt.js'
import { addressOf } from '../../src/http1/address.js'
import { Http1Origin } from '../../src/http1/origin.js'
import { createHttp1Transport } from '../../src/webhook/network/http1-transport.js'
import type { WebhookResponse } from '../../src/webhook/network/transport.js'
import { certificates } from '../helpers/certs.js'
import { requestTo } from '../helpers/webhook-request.js'

const servers: Server[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

/** A receiver that answers 200, or holds the requests to paths starting with `/held`; `end` closes its connections after each answer. */
async function receiver(options: { end?: boolean } = {}) {
  const held: Array<() => void> = []
  const server = createHttpServer((request, response) => {
    request.resume()
    const answer = () => {
      if (options.end) response.setHeader('connection', 'close')
      response.end('ok')
    }
    if (request.url?.startsWith('/held')) held.push(answer)
    else answer()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push(server)
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, held }
}

/** Sends `url` through `origin`'s pool of that URL, as the transport does. */
function send(origin: Http1Origin, url: string): Promise<WebhookResponse> {
  return new Promise((answer) => origin.pool(url).submit(new Http1Attempt(requestTo(url), answer)))
}

describe('addressOf', () => {
  it.each([
    ['http://hooks.example.com', { host: 'hooks.example.com', port: 80, tls: false, hostHeader: 'hooks.example.com' }],
    ['https://hooks.example.com', { host: 'hooks.example.com', port: 443, tls: true, hostHeader: 'hooks.example.com' }],
    [
      'https://hooks.example.com:8443',
      { host: 'hooks.example.com', port: 8443, tls: true, hostHeader: 'hooks.example.com:8443' },
    ],
    ['http://[::1]:8080', { host: '::1', port: 8080, tls: false, hostHeader: '[::1]:8080' }],
  ])('reads %s', (origin, address) => {
    expect(addressOf(origin)).toEqual(address)
  })
})

describe('Http1Origin', () => {
  it('holds nothing when new; holds its idle connection after a request; holds nothing once the receiver closed it', async () => {
    const kept = await receiver()
    const origin = new Http1Origin({ origin: kept.origin, guarded: false, connections: 4 })
    expect(origin.empty).toBe(true)
    expect(await send(origin, `${kept.origin}/a`)).toMatchObject({ ok: true, status: 200 })
    await vi.waitFor(() => expect(origin.empty).toBe(false))
    servers[0]?.closeAllConnections()
    await vi.waitFor(() => expect(origin.empty).toBe(true))
    await origin.close()
  })

  it('is not empty while a URL has a connection in use', async () => {
    const slow = await receiver()
    const origin = new Http1Origin({ origin: slow.origin, guarded: false, connections: 4 })
    const answered = send(origin, `${slow.origin}/held`)
    await vi.waitFor(() => expect(slow.held).toHaveLength(1))
    expect(origin.empty).toBe(false)
    slow.held[0]?.()
    expect(await answered).toMatchObject({ status: 200 })
    await origin.close()
  })

  it('gives a URL the same pool while it has work, and forgets pools that hold nothing once many have come', async () => {
    const slow = await receiver()
    const origin = new Http1Origin({ origin: slow.origin, guarded: false, connections: 4 })
    const quiet = origin.pool(`${slow.origin}/quiet`)
    const answered = send(origin, `${slow.origin}/held`)
    const busy = origin.pool(`${slow.origin}/held`)
    await vi.waitFor(() => expect(slow.held).toHaveLength(1))
    for (let index = 0; index < ENTRIES_BEFORE_SWEEP; index++) origin.pool(`${slow.origin}/other/${index}`)
    expect(origin.pool(`${slow.origin}/held`)).toBe(busy)
    expect(origin.pool(`${slow.origin}/quiet`)).not.toBe(quiet)
    slow.held[0]?.()
    await answered
    await origin.close()
  })

  it('opens a connection of its own for a URL while the idle one is in use by another', async () => {
    const slow = await receiver()
    const origin = new Http1Origin({ origin: slow.origin, guarded: false, connections: 4 })
    await send(origin, `${slow.origin}/a`)
    const held = send(origin, `${slow.origin}/held`)
    await vi.waitFor(() => expect(slow.held).toHaveLength(1))
    expect(await send(origin, `${slow.origin}/b`)).toMatchObject({ status: 200 })
    slow.held[0]?.()
    await held
    await origin.close()
  })
})

describe('Http1Origin over TLS', () => {
  it('names the host to TLS (SNI) for a name, and no name for an IP address', async () => {
    const names: Array<string | false> = []
    const server = createTlsServer(certificates.selfSigned)
    server.on('secureConnection', (socket) => {
      names.push((socket as unknown as { servername: string | false }).servername)
      socket.once('data', () => socket.end('HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n'))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const transport = createHttp1Transport({ tls: { ca: certificates.selfSigned.cert } })
    try {
      expect(await transport.send(requestTo(`https://localhost:${port}/in`))).toMatchObject({ status: 204 })
      expect(await transport.send(requestTo(`https://127.0.0.1:${port}/in`))).toMatchObject({ status: 204 })
      expect(names).toEqual(['localhost', false])
    } finally {
      await transport.close?.()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
