// What `tsconfig.isomorphic.json` resolves undici, BullMQ and ioredis to: a module with nothing
// in it, so that importing any of them below the isomorphic entries is a type error ("has no
// exported member"), and their types (undici's reference Node's) stay out of that program.
declare const nodeOnlyPackage: 'Node-only: import it from src/*/platform/node.ts, src/webhook/node-only.ts or src/webhook/bullmq only'
export default nodeOnlyPackage
