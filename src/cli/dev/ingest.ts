import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { MAX_BATCH_BYTES, type WireMessage } from '../../index.js'
import { BodyTooLargeError, readBody } from '../http.js'
import { BatchRejection, parseBatch } from './batch.js'
import { writeKeyMatches } from './write-key.js'

/** What the ingest server does with what it accepts and refuses. */
export interface IngestHandlers {
  readonly writeKey: string
  readonly onBatch: (messages: WireMessage[], bytes: number) => void
  readonly onRejected: (rejection: BatchRejection) => void
}

/**
 * Whether `Authorization` is HTTP Basic with the write key as user name (the password is ignored):
 * `missing` without Basic credentials, `wrong` with another key, so the sender learns which.
 */
function authorization(header: string | undefined, writeKey: string): 'ok' | 'missing' | 'wrong' {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '')
  if (!match?.[1]) return 'missing'
  const credentials = Buffer.from(match[1], 'base64').toString('utf8')
  const user = credentials.includes(':') ? credentials.slice(0, credentials.indexOf(':')) : credentials
  return writeKeyMatches(writeKey, user) ? 'ok' : 'wrong'
}

async function accept(request: IncomingMessage, writeKey: string): Promise<{ messages: WireMessage[]; bytes: number }> {
  const path = (request.url ?? '/').split('?')[0]
  if (path !== '/v1/batch')
    throw new BatchRejection(404, 'ERR_NOT_FOUND', `nothing at ${path}: the ingest API is POST /v1/batch.`)
  if (request.method !== 'POST')
    throw new BatchRejection(405, 'ERR_METHOD', `/v1/batch takes POST, not ${request.method}.`)
  const auth = authorization(request.headers.authorization, writeKey)
  if (auth === 'missing') {
    throw new BatchRejection(
      401,
      'ERR_UNAUTHORIZED',
      'send HTTP Basic auth with the write key as user name (eventwire dev printed it at start).',
    )
  }
  if (auth === 'wrong') {
    throw new BatchRejection(
      401,
      'ERR_UNAUTHORIZED',
      "that write key is not this server's: use the one eventwire dev printed at start, or start it with --write-key.",
    )
  }
  let body: Buffer
  try {
    body = await readBody(request, MAX_BATCH_BYTES)
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      throw new BatchRejection(413, 'ERR_BODY_TOO_LARGE', `a batch body may be at most ${MAX_BATCH_BYTES} bytes.`)
    throw error
  }
  return { messages: parseBatch(body.toString('utf8')), bytes: body.length }
}

function answer(response: ServerResponse, status: number, body: object): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

/**
 * The local ingest API: `POST /v1/batch` with the client's basic auth, checked with the client's
 * rules. Accepted batches are answered 200 before anything is forwarded, as a real platform would.
 */
export function createIngestServer(handlers: IngestHandlers): Server {
  return createServer((request, response) => {
    accept(request, handlers.writeKey).then(
      ({ messages, bytes }) => {
        answer(response, 200, { success: true })
        handlers.onBatch(messages, bytes)
      },
      (error: unknown) => {
        const rejection =
          error instanceof BatchRejection ? error : new BatchRejection(500, 'ERR_BAD_BATCH', (error as Error).message)
        // An unread body would otherwise keep the connection busy.
        response.setHeader('connection', 'close')
        answer(response, rejection.status, { success: false, code: rejection.code, error: rejection.message })
        handlers.onRejected(rejection)
      },
    )
  })
}
