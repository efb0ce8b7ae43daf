export { Client } from './dist/index.js'
