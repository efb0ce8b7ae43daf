import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

// Keyed per process, so the digests compared below are of no use to anyone who sees them.
const DIGEST_KEY = randomBytes(32)

const digest = (text: string): Buffer => createHmac('sha256', DIGEST_KEY).update(text, 'utf8').digest()

/**
 * A write key's keyed digest, as text: what a table of many keys is looked up by (serve's
 * sources), so that a lookup takes the same time whatever the key, and what is compared is of no
 * use to anyone who sees it.
 */
export function keyDigest(writeKey: string): string {
  return digest(writeKey).toString('base64')
}

/**
 * Whether `given` is the write key, in time independent of both keys' contents and lengths: it
 * compares two 32-byte HMACs, never the keys themselves, so a wrong key of another length is
 * refused after the same work as one of the right length (an early return on a length mismatch
 * would tell a caller the key's length).
 */
export function writeKeyMatches(writeKey: string, given: string): boolean {
  return timingSafeEqual(digest(writeKey), digest(given))
}
