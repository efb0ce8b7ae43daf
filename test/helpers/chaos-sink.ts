import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the chaos sink does with the n-th request (0-based), after reading its body. */
export type ChaosAction =
  | { kind: 'answer'; status: number; headers?: Record<string, string> }
  /** Destroys the connection without answering (a reset mid-request). */
  | { kind: 'reset' }
  /** Never answers; the connection is closed when the sink closes. */
  | { kind: 'hang' }

/** A loopback ingest sink that misbehaves as scripted and records exactly what it accepted (2xx). */
export interface ChaosSink {
  readonly url: string
  readonly port: number
  /** messageIds of every message in a batch the sink answered 2xx (or the Webhook-Id of a webhook), duplicates included. */
  readonly accepted: string[]
  /** Requests seen, whatever became of them. */
  requests: number
  close(): Promise<void>
}

export async function startChaosSink(
  script: (index: number, bytes: number) => ChaosAction,
  port = 0,
): Promise<ChaosSink> {
  const accepted: string[] = []
  const sink = { url: '', port: 0, accepted, requests: 0, close: async () => {} } as ChaosSink
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const raw = Buffer.concat(chunks)
      const action = script(sink.requests++, raw.length)
      if (action.kind === 'reset') {
        request.socket.destroy()
        return
      }
      if (action.kind === 'hang') return
      if (action.status >= 200 && action.status < 300) {
        // Batches count their messages; a webhook body counts as its Webhook-Id.
        const body = JSON.parse(raw.toString('utf8')) as { batch?: Array<{ messageId: string }> }
        if (body.batch) accepted.push(...body.batch.map((message) => message.messageId))
        else accepted.push(String(request.headers['webhook-id']))
      }
      response.writeHead(action.status, { 'content-type': 'application/json', ...action.headers })
      response.end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const address = server.address() as AddressInfo
  Object.assign(sink, {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
  return sink
}
