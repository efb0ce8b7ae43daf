// Each marked line is a mistake a user makes; the compile error must name what is wrong.
import { Client } from 'eventwire'

const client = new Client('k')
client.track({ userId: 'u1' }) // names: event
client.group({ userId: 'u1' }) // names: groupId
client.alias({ userId: 'u1' }) // names: previousId
client.track({ event: 'E' }) // names: AnonymousIdIfNoUserId
client.track({ userId: 'u1', event: 'E', properties: { total: 10n } }) // names: a BigInt is not a JSON value
client.track({ userId: 'u1', event: 'E', properties: { total: () => 10 } }) // names: a function is not a JSON value
client.identify({ userId: 'u1', traits: { id: Symbol('x') } }) // names: a symbol is not a JSON value
client.track({ userId: 'u1', event: 'E', timestamp: 1_700_000_000_000 }) // names: timestamp
new Client('k', { flushAt: '20' }) // names: flushAt
client.track({ userId: 'u1', event: 'E' })
