import { describe, expect, it } from 'vitest'
import { MAX_TLS_SESSIONS, TlsSessions } from '../../src/http1/tls-sessions.js'

const ticket = (text: string) => Buffer.from(text)

describe('TlsSessions', () => {
  it('keeps the last session of each origin', () => {
    const sessions = new TlsSessions()
    expect(sessions.get('https://a.example')).toBeUndefined()
    sessions.set('https://a.example', ticket('a1'))
    sessions.set('https://a.example', ticket('a2'))
    sessions.set('https://b.example', ticket('b1'))
    expect(sessions.get('https://a.example')).toEqual(ticket('a2'))
    expect(sessions.get('https://b.example')).toEqual(ticket('b1'))
    expect(sessions.size).toBe(2)
  })

  it(`keeps ${MAX_TLS_SESSIONS} origins by default, dropping the one stored longest ago`, () => {
    const sessions = new TlsSessions()
    for (let n = 0; n < MAX_TLS_SESSIONS; n++) sessions.set(`https://${n}.example`, ticket(String(n)))
    // Stored again: the newest now, so the next one past the cap drops origin 1, not origin 0.
    sessions.set('https://0.example', ticket('0 again'))
    sessions.set('https://new.example', ticket('new'))
    expect(sessions.size).toBe(MAX_TLS_SESSIONS)
    expect(sessions.get('https://1.example')).toBeUndefined()
    expect(sessions.get('https://0.example')).toEqual(ticket('0 again'))
    expect(sessions.get('https://2.example')).toEqual(ticket('2'))
    expect(sessions.get('https://new.example')).toEqual(ticket('new'))
  })

  it('takes a smaller cap', () => {
    const sessions = new TlsSessions(1)
    sessions.set('https://a.example', ticket('a'))
    sessions.set('https://b.example', ticket('b'))
    expect([sessions.size, sessions.get('https://a.example'), sessions.get('https://b.example')]).toEqual([
      1,
      undefined,
      ticket('b'),
    ])
  })
})
