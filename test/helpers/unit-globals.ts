import { afterAll } from 'vitest'

// `npm run test:unit` runs the files in shared workers. A file that changes globalThis would change
// it for the files after it: @hono/node-server replaces Request and Response, for one. So what a
// file changed is put back once it ends, as a worker of its own would have it. Vitest's own
// globals are left alone.
const before = Object.getOwnPropertyDescriptors(globalThis) as Record<PropertyKey, PropertyDescriptor>
const own = (key: PropertyKey) => typeof key === 'string' && key.toLowerCase().startsWith('__vitest')

afterAll(() => {
  for (const key of Reflect.ownKeys(globalThis)) {
    const was = before[key]
    const now = Object.getOwnPropertyDescriptor(globalThis, key)
    if (own(key) || now === undefined || !now.configurable) continue
    if (was === undefined) Reflect.deleteProperty(globalThis, key)
    else if (was.value !== now.value || was.get !== now.get || was.set !== now.set)
      Object.defineProperty(globalThis, key, was)
  }
})
