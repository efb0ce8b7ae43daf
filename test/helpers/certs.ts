import { readFileSync } from 'node:fs'

/** A key and certificate in PEM, as `tls.createServer` takes them. */
export interface KeyPair {
  key: string
  cert: string
}

const read = (name: string) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url), 'utf8')
const pair = (name: string): KeyPair => ({ key: read(`${name}.key`), cert: read(`${name}.pem`) })

/** Committed test certificates (test/fixtures/tls/README.md says how they were made). */
export const certificates = {
  /** Self-signed for 127.0.0.1 and localhost. */
  selfSigned: pair('self-signed'),
  /** The test CA that signed `expired` and `wrongHost`. */
  ca: read('ca.pem'),
  /** Signed by the CA for 127.0.0.1, already expired. */
  expired: pair('expired'),
  /** Signed by the CA for wrong.invalid only. */
  wrongHost: pair('wrong-host'),
}
