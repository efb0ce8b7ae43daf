import { http, HttpResponse } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll } from 'vitest'

export const ENDPOINT = 'https://ingest.test'
export const BATCH_URL = `${ENDPOINT}/v1/batch`

/** A batch request as msw saw it. */
export interface Captured {
  readonly headers: Headers
  readonly body: string
  readonly json: { batch: Array<Record<string, unknown>>; context: unknown; messageId: string; sentAt: string }
  readonly at: number
  readonly keepalive: boolean
}

/** What the handler answers to the n-th request (0-based); `'network'` fails it like a dropped connection. */
export type MswResponder = (index: number) => Response | 'network' | Promise<Response | 'network'>

/**
 * Installs msw for the current test file and returns the list of batch requests it captures.
 * Each test sets `respond` (default: 200) and starts from an empty list.
 */
export function useBatchEndpoint(): { captured: Captured[]; respond: { current: MswResponder } } {
  const captured: Captured[] = []
  const respond: { current: MswResponder } = { current: () => HttpResponse.json({}) }
  const server = setupServer(
    http.post(BATCH_URL, async ({ request }) => {
      const body = await request.text()
      const index =
        captured.push({
          headers: request.headers,
          body,
          json: JSON.parse(body),
          at: Date.now(),
          keepalive: request.keepalive,
        }) - 1
      const answer = await respond.current(index)
      return answer === 'network' ? HttpResponse.error() : answer
    }),
  )
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
  afterEach(() => {
    captured.length = 0
    respond.current = () => HttpResponse.json({})
  })
  afterAll(() => server.close())
  return { captured, respond }
}
