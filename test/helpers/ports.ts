import { createServer } from 'node:net'

/**
 * `EVENTWIRE_TEST_PORTS=17000-17099` keeps the tests on a range of ports, for a machine several
 * test runs share; without it the system picks any free port.
 */
function portRange(): { first: number; size: number } | undefined {
  const match = /^(\d+)-(\d+)$/.exec(process.env['EVENTWIRE_TEST_PORTS'] ?? '')
  if (!match) return undefined
  const first = Number(match[1])
  return { first, size: Number(match[2]) - first + 1 }
}

async function listens(port: number): Promise<number | undefined> {
  const server = createServer()
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => resolve(true))
  })
  if (!bound) return undefined
  const { port: taken } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return taken
}

/** A loopback port that was free a moment ago (and that nothing listens on until someone does). */
export async function freePort(): Promise<number> {
  const range = portRange()
  if (range === undefined) {
    const port = await listens(0)
    if (port === undefined) throw new Error('no free loopback port')
    return port
  }
  // A random start: test files run in parallel processes, each taking ports from the same range.
  const start = Math.floor(Math.random() * range.size)
  for (let step = 0; step < range.size; step++) {
    const port = await listens(range.first + ((start + step) % range.size))
    if (port !== undefined) return port
  }
  throw new Error(`no free port in EVENTWIRE_TEST_PORTS=${process.env['EVENTWIRE_TEST_PORTS']}`)
}
