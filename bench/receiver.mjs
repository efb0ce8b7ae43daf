// The bench's webhook receiver, in a process of its own: answers every POST with the status given
// as its first argument (default 200). Prints its port.
import { createServer } from 'node:http'

const status = Number(process.argv[2] ?? 200)
const server = createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    response.writeHead(status)
    response.end()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => console.log(server.address().port))
