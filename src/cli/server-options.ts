import type { Server } from 'node:http'
import { portArgument } from './arguments.js'
import { listenOn } from './http.js'

/** Where a server command listens: the options `dev` and `listen` share. */
export interface AddressOptions {
  port: number
  host: string
}

/** `--port` (0: any free port) and `--host`, for a server command's options. */
export function addressOptions(defaultPort: number) {
  return {
    port: {
      long: 'port',
      short: 'p',
      value: 'port',
      description: 'port to listen on; 0 picks a free one',
      parse: portArgument,
      default: defaultPort,
    },
    host: { long: 'host', value: 'host', description: 'address to listen on', default: '127.0.0.1' },
  } as const
}

/**
 * Starts a command's server at its `--port` and `--host`: resolves with the base URL, or with
 * `undefined` after telling the user why it could not (a port in use, an address not here): on
 * stderr, or through `report` (serve writes it as one of its JSON log lines).
 */
export async function startServer(
  server: Server,
  name: string,
  options: AddressOptions,
  report: (message: string) => void = (message) => process.stderr.write(`eventwire ${name}: ${message}\n`),
): Promise<string | undefined> {
  try {
    return await listenOn(server, options.port, options.host)
  } catch (error) {
    report(`cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`)
    return undefined
  }
}
