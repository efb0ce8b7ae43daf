import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A fresh self-signed certificate for 127.0.0.1 and localhost, made by openssl at test time. */
export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'eventwire-cert-'))
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ], { stdio: 'ignore' })
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A throwaway certificate authority, and leaf certificates it signs, made by openssl at test time. */
export function certificateAuthority(): { ca: string; issue(options: { altNames: string; days: number }): { key: string; cert: string } } {
  const dir = mkdtempSync(join(tmpdir(), 'eventwire-ca-'))
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' })
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=eventwire test CA'])
  const ca = readFileSync(join(dir, 'ca.pem'), 'utf8')
  let serial = 0
  return {
    ca,
    issue({ altNames, days }) {
      const name = `leaf${++serial}`
      run(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', '/CN=eventwire test leaf'])
      writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${altNames}\n`)
      // A negative number of days makes a certificate that expired before it was issued.
      run(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', String(serial), '-days', String(days), '-extfile', `${name}.ext`, '-out', `${name}.pem`])
      return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), cert: readFileSync(join(dir, `${name}.pem`), 'utf8') }
    },
  }
}
