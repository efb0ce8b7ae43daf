import { withoutCredentials } from '../redact.js'

/**
 * The library's words for its settings, said as serve's options: an operator sets `--durability`,
 * not `durability:`. Credentials in a Redis URL are left out.
 */
export function inServeWords(message: string): string {
  return withoutCredentials(message)
    .replace(/ for Webhook(?:Queue|Worker)\b/g, '')
    .replace(/^eventwire: Webhook(?:Queue|Worker) runs/, 'serve runs')
    .replace("pass durability: 'best-effort'", 'run serve with --durability best-effort')
    .replace("durability 'best-effort'", '--durability best-effort')
    .replace(/^Invalid option `durability`: /, '--durability: ')
}
