import { createServer, type Server } from 'node:http'
import type { WireMessage } from '../../index.js'
import { BatchRejection } from '../ingest/batch.js'
import {
  answerJson as answer,
  ingestKind,
  INGEST_SERVER_OPTIONS,
  readIngest,
  type WriteKeys,
} from '../ingest/ingest-request.js'
import { writeKeyMatches } from '../ingest/write-key.js'
import { corsHeaders, preflightHeaders, type CorsOrigins } from './cors.js'

/** What the ingest server does with what it accepts and refuses. */
export interface IngestHandlers {
  readonly writeKey: string
  /** Browser origins that may send (`*`: any); requests without `Origin` are not browsers' and always may. */
  readonly corsOrigins: CorsOrigins
  readonly onBatch: (messages: WireMessage[], bytes: number) => void
  readonly onRejected: (rejection: BatchRejection) => void
}

function originRefused(origin: string | undefined): BatchRejection {
  return new BatchRejection(
    403,
    'ERR_ORIGIN',
    `pages from ${origin} may not send here: start eventwire dev with --cors-origin ${origin}.`,
  )
}

/** Dev's one write key, as the shared reader asks for it. */
function devKeys(writeKey: string): WriteKeys<true> {
  return {
    sourceOf: (given) => (writeKeyMatches(writeKey, given) ? true : undefined),
    missingHint:
      'send the write key as the HTTP Basic auth user name, or as "writeKey" in the body (eventwire dev printed it at start).',
    wrongHint:
      "that write key is not this server's: use the one eventwire dev printed at start, or start it with --write-key.",
  }
}

/**
 * The local ingest API: `POST /v1/batch` with the write key as the Basic-auth user name or as
 * `writeKey` in the body, checked with the client's rules, and CORS for pages of the allowed
 * origins (preflights included). Accepted batches are answered 200 before anything is forwarded,
 * as a real platform would.
 */
export function createIngestServer(handlers: IngestHandlers): Server {
  const keys = devKeys(handlers.writeKey)
  return createServer(INGEST_SERVER_OPTIONS, (request, response) => {
    const path = (request.url ?? '/').split('?')[0] as string
    // Every answer to an allowed page carries its CORS headers: without them the page cannot read
    // even a refusal's reason.
    const cors = corsHeaders(request.headers.origin, handlers.corsOrigins) ?? {}
    const refuse = (rejection: BatchRejection) => {
      // An unread body would otherwise keep the connection busy.
      response.setHeader('connection', 'close')
      answer(response, rejection.status, { success: false, code: rejection.code, error: rejection.message }, cors)
      handlers.onRejected(rejection)
    }
    const kind = ingestKind(path)
    if (kind === undefined) {
      refuse(
        new BatchRejection(
          404,
          'ERR_NOT_FOUND',
          `nothing at ${path}: the ingest API is POST /v1/batch, or /v1/<type>.`,
        ),
      )
      return
    }
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      const allowed = preflightHeaders(request.headers, handlers.corsOrigins)
      if (allowed === undefined) {
        refuse(originRefused(request.headers.origin))
        return
      }
      response.writeHead(204, allowed).end()
      return
    }
    if (corsHeaders(request.headers.origin, handlers.corsOrigins) === undefined) {
      refuse(originRefused(request.headers.origin))
      return
    }
    readIngest(request, kind, keys).then(
      ({ messages, bytes }) => {
        answer(response, 200, { success: true }, cors)
        handlers.onBatch(messages, bytes)
      },
      (error: unknown) =>
        refuse(
          error instanceof BatchRejection ? error : new BatchRejection(500, 'ERR_BAD_BATCH', (error as Error).message),
        ),
    )
  })
}
