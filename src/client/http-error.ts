/** The answer an {@link HTTPError} is about. */
export interface HTTPErrorResponse {
  readonly status: number
  readonly statusText: string
  readonly headers: Headers
}

/**
 * A status the client does not take as delivered, from the Node transport: it has the name, the
 * message and the `response.status`, `response.statusText` and `response.headers` of ky's
 * `HTTPError`, which the `fetch` transport passes on, so that code reading a `DeliveryError`'s
 * `cause` or a `'retry'` event's `error` works with either.
 */
export class HTTPError extends Error {
  readonly response: HTTPErrorResponse

  constructor(response: HTTPErrorResponse, method: string, url: string) {
    super(`Request failed with status code ${`${response.status} ${response.statusText}`.trim()}: ${method} ${url}`)
    this.name = 'HTTPError'
    this.response = response
  }
}
