// `eventwire destinations` and `eventwire dead-letters` against a real Redis: what they print, what
// they change, what they keep from the terminal (secrets, credentials), and their exit codes.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { WebhookQueue, WebhookWorker } from '../../src/webhook/bullmq/index.js'
import { plainEnv, runCli } from '../helpers/cli.js'
import { freePort } from '../helpers/ports.js'
import { redisForFile } from '../helpers/redis-suite.js'

const redis = redisForFile()
const open: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()))
})
let queues = 0
const folder = mkdtempSync(join(tmpdir(), 'eventwire-registry-'))

describe.runIf(redis.available)('eventwire destinations', () => {
  /** Runs the command on a queue of its own name; `name` is the queue's. */
  function cliOn(name: string) {
    const env = plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}` })
    return (...args: string[]) => runCli([...args, '--name', name], env)
  }
  const queueOf = (name: string) => {
    const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.server.port }, name })
    open.push(queue)
    return queue
  }

  it('sets, lists, shows, disables, enables and deletes, as the registry then holds them', async () => {
    const name = `cli-registry-${++queues}`
    const cli = cliOn(name)
    const set = await cli(
      'destinations',
      'set',
      'acme',
      '--url',
      'https://hooks.acme.example/in',
      '--secret',
      'new',
      '--secret',
      'old',
      '--mode',
      'each',
    )
    expect(set.code).toBe(0)
    expect(JSON.parse(set.stdout)).toMatchObject({
      id: 'acme',
      mode: 'each',
      enabled: true,
      sharedSecret: ['***', '***'],
    })
    const stored = await queueOf(name).destinations.get('acme')
    expect(stored).toMatchObject({ webhooks: [{ url: 'https://hooks.acme.example/in' }], sharedSecret: ['new', 'old'] })

    expect(await cli('destinations', 'set', 'beta', '--url', 'https://beta.example/')).toMatchObject({ code: 0 })
    const list = await cli('destinations', 'list')
    expect(list.stdout.split('\n')).toEqual([
      `acme  enabled   each  v${stored?.version}  https://hooks.acme.example/in`,
      expect.stringMatching(/^beta {2}enabled {3}any {2}v\d+ {2}https:\/\/beta\.example\/$/),
    ])
    const lines = (await cli('destinations', 'list', '--json')).stdout.split('\n').map((line) => JSON.parse(line))
    expect(lines.map((line) => line.id)).toEqual(['acme', 'beta'])
    expect(lines[0].sharedSecret).toEqual(['***', '***'])

    expect(await cli('destinations', 'disable', 'acme')).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^acme: disabled \(version \d+\)$/),
    })
    expect((await queueOf(name).destinations.get('acme'))?.enabled).toBe(false)
    expect(JSON.parse((await cli('destinations', 'enable', 'acme', '--json')).stdout)).toMatchObject({
      id: 'acme',
      enabled: true,
    })
    expect(await cli('destinations', 'delete', 'beta')).toMatchObject({ code: 0, stdout: 'deleted beta' })
    expect(await queueOf(name).destinations.get('beta')).toBeUndefined()
  })

  it('keeps secrets and credential headers off the terminal unless --show-secrets', async () => {
    const name = `cli-registry-${++queues}`
    const cli = cliOn(name)
    const file = join(folder, `${name}.json`)
    writeFileSync(
      file,
      JSON.stringify({
        webhooks: [
          {
            url: 'https://hooks.acme.example/in',
            headers: { Authorization: 'Bearer t0ken', 'X-Team': 'data', 'X-Api-Key': 'k3y' },
          },
        ],
        standardSecret: `whsec_${Buffer.alloc(24, 1).toString('base64')}`,
      }),
    )
    const set = await cli('destinations', 'set', 'acme', '--file', file)
    expect(set.code).toBe(0)
    for (const output of [
      set.stdout,
      (await cli('destinations', 'show', 'acme')).stdout,
      (await cli('destinations', 'list', '--json')).stdout,
    ]) {
      expect(output).not.toMatch(/t0ken|k3y|whsec_/)
      expect(output).toMatch(/"X-Team": ?"data"/)
    }
    const shown = JSON.parse((await cli('destinations', 'show', 'acme', '--json', '--show-secrets')).stdout)
    expect(shown.webhooks[0].headers).toEqual({ Authorization: 'Bearer t0ken', 'X-Team': 'data', 'X-Api-Key': 'k3y' })
    expect(shown.standardSecret).toMatch(/^whsec_/)
  })

  it("prints a destination's attempt log, newest first, one event's with --event, with what came from Redis made harmless", async () => {
    const name = `cli-registry-${++queues}`
    const cli = cliOn(name)
    const client = new Redis({ host: '127.0.0.1', port: redis.server.port })
    open.push({ close: async () => client.disconnect() })
    const key = `bull:${name}:attempts:acme`
    const entry = (eventId: string, n: number, status: string, code: string, error: string) => [
      't',
      '1764300000000',
      'e',
      eventId,
      'u',
      'https://hooks.acme.example/in',
      'n',
      String(n),
      's',
      status,
      'c',
      code,
      'x',
      error,
      'd',
      '12.5',
    ]
    await client.xadd(key, '*', ...entry('order-1', 1, '503', 'ERR_HTTP_STATUS', 'answered HTTP 503.\u001b[2J'))
    await client.xadd(key, '*', ...entry('order-2', 1, '200', '', ''))
    await client.xadd(key, '*', ...entry('order-1', 2, '200', '', ''))

    const printed = await cli('destinations', 'attempts', 'acme')
    expect(printed.code).toBe(0)
    expect(printed.stdout.split('\n')).toEqual([
      '2025-11-28T03:20:00.000Z  order-1  https://hooks.acme.example/in  #2  200  12.5 ms',
      '2025-11-28T03:20:00.000Z  order-2  https://hooks.acme.example/in  #1  200  12.5 ms',
      '2025-11-28T03:20:00.000Z  order-1  https://hooks.acme.example/in  #1  ERR_HTTP_STATUS 503  12.5 ms  answered HTTP 503. [2J',
    ])
    const one = await cli('destinations', 'attempts', 'acme', '--event', 'order-1', '--limit', '1', '--json')
    expect(JSON.parse(one.stdout)).toEqual({
      at: 1764300000000,
      eventId: 'order-1',
      destination: 'acme',
      url: 'https://hooks.acme.example/in',
      attempt: 2,
      accepted: true,
      status: 200,
      durationMs: 12.5,
    })
    // No attempt, and no such destination: most likely a typo, said so.
    expect(await cli('destinations', 'attempts', 'nobody')).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'error: no destination "nobody" in the registry\n',
    })
    expect(await cli('destinations', 'list', '--limit', '5')).toMatchObject({ code: 2 })
    expect(await cli('destinations', 'attempts')).toMatchObject({ code: 2 })
  })

  it('replays a window of what a destination was kept, with --since and --until in each form, and says what it left out', async () => {
    const name = `cli-registry-${++queues}`
    const cli = cliOn(name)
    await queueOf(name).destinations.set({ id: 'acme', webhooks: [{ url: 'https://hooks.acme.example/in' }] })
    const client = new Redis({ host: '127.0.0.1', port: redis.server.port })
    open.push({ close: async () => client.disconnect() })
    const key = `bull:${name}:sent:acme`
    // As a worker with keepSent writes them: one at 2025-11-28T03:20:00Z, one an hour later, one now.
    await client.xadd(key, '1764300000000-0', 'e', 'order-1', 'b', '{"n":1}')
    await client.xadd(key, '1764303600000-0', 'e', 'order-2', 'b', '{"n":2}')
    await client.xadd(key, '*', 'e', 'order-3', 'b', '{"n":3}')

    const first = await cli(
      'destinations',
      'replay',
      'acme',
      '--since',
      '2025-11-28T03:20:00Z',
      '--until',
      '1764300000000',
    )
    expect(first).toMatchObject({ code: 0, stdout: 'acme: 1 of 1 events queued again' })
    const again = await cli(
      'destinations',
      'replay',
      'acme',
      '--since',
      '1764300000000',
      '--until',
      '2025-11-28T04:20:00+01:00',
      '--json',
    )
    expect(JSON.parse(again.stdout)).toEqual({
      id: 'acme',
      found: 1,
      queued: 0,
      inFlight: 1,
      deadLetters: 0,
      disabled: 0,
    })
    expect((await cli('destinations', 'replay', 'acme', '--since', '1h')).stdout).toBe(
      'acme: 1 of 1 events queued again',
    )
    expect((await queueOf(name).counts()).waiting).toBe(2)
    expect(await cli('destinations', 'replay', 'acme', '--since', '2025-11-28')).toMatchObject({
      code: 0,
      stdout: 'acme: 1 of 3 events queued again; 2 already waiting or being delivered',
    })
    expect((await cli('destinations', 'replay', 'acme', '--since', '0', '--until', '1764299999999')).stdout).toBe(
      'acme: 0 of 0 events queued again: nothing kept for that window (workers keep delivered events only with their keepSent option)',
    )
    await queueOf(name).destinations.disable('acme')
    expect((await cli('destinations', 'replay', 'acme', '--since', '0')).stdout).toBe(
      'acme: 0 of 3 events queued again; 3 not sent: the destination is disabled (enable it, then replay)',
    )
    expect(await cli('destinations', 'replay', 'nobody', '--since', '0')).toMatchObject({ code: 1 })
    for (const bad of [
      ['replay', 'acme'],
      ['replay', 'acme', '--since', '2025-11-28T03:20:00'],
      ['replay', 'acme', '--since', 'yesterday'],
      ['replay', 'acme', '--since', '1m', '--until', '1764300000000'],
      ['show', 'acme', '--since', '1h'],
    ]) {
      const run = await cli('destinations', ...bad)
      expect(run.code, bad.join(' ')).toBe(2)
      expect(run.stdout).toBe('')
    }
    expect((await cli('destinations', 'replay', 'acme')).stderr).toMatch(/replay needs --since/)
    expect(
      (await cli('destinations', 'attempts', 'acme', '--since', '1764300000001', '--until', '1764300000000')).stderr,
    ).toMatch(/--until is before --since \(2025-11-28T03:20:00\.000Z < 2025-11-28T03:20:00\.001Z\)/)
    expect((await cli('destinations', 'replay', 'acme', '--since', 'yesterday')).stderr).toMatch(
      /ISO 8601 date-time with its zone/,
    )
  })

  it('warns when set from the command line drops the secrets or headers the destination had', async () => {
    const name = `cli-registry-${++queues}`
    const cli = cliOn(name)
    const file = join(folder, 'keep.json')
    writeFileSync(
      file,
      JSON.stringify({ webhooks: [{ url: 'https://a.example/in', headers: { 'X-Team': 'data' } }], sharedSecret: 's' }),
    )
    expect(await cli('destinations', 'set', 'acme', '--file', file)).toMatchObject({ code: 0, stderr: '' })
    const kept = await cli('destinations', 'set', 'acme', '--url', 'https://a.example/in', '--secret', 's')
    expect(kept.stderr.trim()).toBe(
      'warning: set replaced acme whole, and its headers went with it. Give them again (--secret, --standard-secret, or --file with the whole destination) to keep them.',
    )
    const dropped = await cli('destinations', 'set', 'acme', '--url', 'https://a.example/in')
    expect(dropped.code).toBe(0)
    expect(dropped.stderr.trim()).toBe(
      'warning: set replaced acme whole, and its sharedSecret went with it: its requests now go out unsigned. Give them again (--secret, --standard-secret, or --file with the whole destination) to keep them.',
    )
    expect(await cli('destinations', 'set', 'acme', '--url', 'https://a.example/in')).toMatchObject({ stderr: '' })
  })

  it('takes back what show --json printed: refuses the secrets it hid, keeps those shown, and writes only over the version it shows', async () => {
    const name = `cli-registry-${++queues}`
    const cli = cliOn(name)
    await cli('destinations', 'set', 'acme', '--url', 'https://a.example/in', '--secret', 'real-secret')
    const hidden = join(folder, 'hidden.json')
    writeFileSync(hidden, (await cli('destinations', 'show', 'acme', '--json')).stdout)
    const refused = await cli('destinations', 'set', 'acme', '--file', hidden)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(`the file's sharedSecret is "***", as show prints what it hides`)
    expect((await queueOf(name).destinations.get('acme'))?.sharedSecret).toEqual(['real-secret'])
    const shownFile = join(folder, 'shown.json')
    writeFileSync(shownFile, (await cli('destinations', 'show', 'acme', '--json', '--show-secrets')).stdout)
    expect(await cli('destinations', 'set', 'acme', '--file', shownFile)).toMatchObject({ code: 0, stderr: '' })
    expect((await queueOf(name).destinations.get('acme'))?.sharedSecret).toEqual(['real-secret'])
    // The file's version is now behind: the write is refused, as with --if-version.
    const behind = await cli('destinations', 'set', 'acme', '--file', shownFile)
    expect(behind.code).toBe(2)
    expect(behind.stderr).toMatch(/is at version \d+, not \d+: someone changed it meanwhile/)
  })

  it('warns when a Standard Webhooks secret is given as the X-Signature secret, without printing it', async () => {
    const name = `cli-registry-${++queues}`
    const cli = cliOn(name)
    const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`
    const set = await cli('destinations', 'set', 'acme', '--url', 'https://a.example/in', '--secret', secret)
    expect(set.code).toBe(0)
    expect(set.stderr).toContain('acme has a whsec_ secret as its X-Signature secret')
    expect(set.stderr).toContain('give it with --standard-secret (standardSecret)')
    expect(set.stderr + set.stdout).not.toContain(secret)
    const plain = await cli('destinations', 'set', 'beta', '--url', 'https://b.example/in', '--secret', 's3cret')
    expect(plain).toMatchObject({ code: 0, stderr: '' })
    // Given where it belongs: stored as the Standard Webhooks secret, no warning; a rotation of two.
    const other = `whsec_${Buffer.alloc(24, 9).toString('base64')}`
    const standard = await cli(
      'destinations',
      'set',
      'gamma',
      '--url',
      'https://c.example/in',
      '--standard-secret',
      secret,
      '--standard-secret',
      other,
    )
    expect(standard).toMatchObject({ code: 0, stderr: '' })
    const shown = await cli('destinations', 'show', 'gamma', '--json', '--show-secrets')
    expect(JSON.parse(shown.stdout)).toMatchObject({ standardSecret: [secret, other] })
    expect(JSON.parse(shown.stdout)).not.toHaveProperty('sharedSecret')
    const wrong = await cli(
      'destinations',
      'set',
      'delta',
      '--url',
      'https://d.example/in',
      '--standard-secret',
      's3cret',
    )
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain('standardSecret')
    const both = await cli('destinations', 'set', 'delta', '--file', '-', '--standard-secret', secret)
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('--url, --secret, --standard-secret and --mode, not both')
  })

  it('warns when set enables a destination that was disabled', async () => {
    const name = `cli-registry-${++queues}`
    const cli = cliOn(name)
    await cli('destinations', 'set', 'acme', '--url', 'https://a.example/in')
    await cli('destinations', 'disable', 'acme')
    const set = await cli('destinations', 'set', 'acme', '--url', 'https://b.example/in')
    expect(set.code).toBe(0)
    expect(set.stderr.trim()).toBe(
      'warning: acme was disabled, and set enabled it: workers send its events again. To keep it off, give "enabled": false in --file, or run disable after.',
    )
  })

  it('exits 2 for a destination the registry refuses, naming the field, and writes nothing', async () => {
    const name = `cli-registry-${++queues}`
    const cli = cliOn(name)
    const refused = await cli('destinations', 'set', 'acme', '--url', 'ftp://hooks.acme.example/in')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('`destination.webhooks[0].url`: expected a full http:// or https:// URL')
    const six = ['a', 'b', 'c', 'd', 'e', 'f'].flatMap((host) => ['--url', `https://${host}.example/`])
    expect((await cli('destinations', 'set', 'acme', ...six)).stderr).toContain('expected 1 to 5 entries, got 6')
    expect((await cli('destinations', 'set', 'a/b', '--url', 'https://a.example/')).code).toBe(2)
    expect((await cli('destinations', 'list')).stdout).toBe('')
  })

  it('exits 2 for a write over another version than --if-version, and for a wrong command line, before asking Redis', async () => {
    const name = `cli-registry-${++queues}`
    const cli = cliOn(name)
    await cli('destinations', 'set', 'acme', '--url', 'https://a.example/', '--if-version', '0')
    const conflict = await cli('destinations', 'set', 'acme', '--url', 'https://b.example/', '--if-version', '0')
    expect(conflict.code).toBe(2)
    expect(conflict.stderr).toMatch(/exists already, at version \d+: ifVersion 0 writes only a new one/)
    expect(await cli('destinations', 'show')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("missing required argument 'id' for 'show'"),
    })
    expect(await cli('destinations', 'list', 'acme')).toMatchObject({ code: 2 })
    expect(await cli('destinations', 'show', 'acme', '--url', 'https://a.example/')).toMatchObject({ code: 2 })
    expect(await cli('destinations', 'set', 'acme')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--url URL'),
    })
    expect(await cli('destinations', 'rename', 'acme')).toMatchObject({ code: 2 })
  })

  it('exits 1 for a destination that is not there, and for a Redis it cannot reach, without printing its password', async () => {
    const name = `cli-registry-${++queues}`
    expect(await cliOn(name)('destinations', 'show', 'nobody')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no destination "nobody" in the registry'),
    })
    expect((await cliOn(name)('destinations', 'delete', 'nobody')).code).toBe(1)
    const down = await runCli(
      ['destinations', 'list', '--redis', `redis://ops:pa55word@127.0.0.1:${await freePort()}`],
      plainEnv(),
    )
    expect(down.code).toBe(1)
    expect(down.stderr).toMatch(/Redis at redis:\/\/\*\*\*@127\.0\.0\.1:\d+ failed: .*ECONNREFUSED.*Check --redis/)
    expect(down.stderr).not.toContain('pa55word')
    expect((await runCli(['destinations', 'list', '--redis', 'http://127.0.0.1:6379'], plainEnv())).code).toBe(2)
  })
})

describe.runIf(redis.available)('eventwire dead-letters', () => {
  it("lists one destination's dead letters, re-drives them all, and purges the rest", { timeout: 30_000 }, async () => {
    const name = `cli-letters-${++queues}`
    const env = plainEnv({ EVENTWIRE_REDIS: `redis://127.0.0.1:${redis.server.port}` })
    const cli = (...args: string[]) => runCli([...args, '--name', name], env)
    const queue = new WebhookQueue({ connection: { host: '127.0.0.1', port: redis.server.port }, name })
    open.push(queue)
    const refused = `http://127.0.0.1:${await freePort()}/in`
    for (const id of ['a', 'b']) await queue.destinations.set({ id, webhooks: [{ url: refused }] })
    const worker = new WebhookWorker(
      { retryWindowMs: 0, breaker: false },
      { connection: { host: '127.0.0.1', port: redis.server.port, maxRetriesPerRequest: null }, name },
    )
    await worker.ready()
    // First, an event of no destination, which this worker without webhooks of its own cannot send.
    await queue.enqueue({ type: 'track', userId: 'u1', event: 'E', messageId: 'o0' })
    await expect.poll(async () => (await queue.counts()).failed, { timeout: 15_000 }).toBe(1)
    // One at a time, each a dead letter before the next: the list's order (newest first) is then theirs.
    let failed = 1
    for (let index = 0; index < 3; index++) {
      for (const destination of ['a', 'b']) {
        await queue.enqueue(
          { type: 'track', userId: 'u1', event: 'E', messageId: `${destination}${index}` },
          { destination },
        )
        failed++
        await expect.poll(async () => (await queue.counts()).failed, { timeout: 15_000 }).toBe(failed)
      }
    }
    await worker.close()

    const listed = await cli('dead-letters', 'list', '--destination', 'a', '--json')
    const letters = listed.stdout.split('\n').map((line) => JSON.parse(line))
    expect(letters.map((letter) => letter.eventId).sort()).toEqual(['a0', 'a1', 'a2'])
    expect(letters.every((letter) => letter.destination === 'a' && /ECONNREFUSED/.test(letter.reason))).toBe(true)
    expect((await cli('dead-letters', 'list', '--limit', '2')).stdout.split('\n')).toHaveLength(2)
    // None, and no such destination: most likely a typo, said so.
    expect(await cli('dead-letters', 'list', '--destination', 'nosuch')).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'error: no destination "nosuch" in the registry\n',
    })
    const lines = (await cli('dead-letters', 'list')).stdout.split('\n')
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT.*Z {2}b2 {2}b {2}not delivered/)
    // A dead letter of no destination keeps the columns: a dash where the destination goes.
    expect(lines.at(-1)).toMatch(
      /^\d{4}-\d\d-\d\dT.*Z {2}o0 {2}- {2}ERR_UNKNOWN_DESTINATION: the event names no destination/,
    )

    expect(await cli('dead-letters', 'redrive', '--all', '--destination', 'a')).toMatchObject({
      code: 0,
      stdout: 're-driven 3 dead letter(s)',
    })
    expect(await queue.counts()).toMatchObject({ waiting: 3, failed: 4 })
    expect(await cli('dead-letters', 'redrive', 'b0', '--destination', 'b')).toMatchObject({
      code: 0,
      stdout: 're-driven b0',
    })
    expect(await cli('dead-letters', 'redrive', 'b1')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        'no dead letter "b1" without a destination (a dead letter of a destination needs --destination <id>)',
      ),
    })
    expect(await cli('dead-letters', 'redrive')).toMatchObject({ code: 2 })
    expect(await cli('dead-letters', 'purge', '--destination', 'b')).toMatchObject({ code: 2 })
    expect(JSON.parse((await cli('dead-letters', 'purge', '--json')).stdout)).toEqual({ purged: 3 })
    expect((await queue.counts()).failed).toBe(0)
    // None left: said on stderr, nothing on stdout; --json prints nothing at all.
    expect(await cli('dead-letters', 'list')).toMatchObject({ code: 0, stdout: '', stderr: 'no dead letters\n' })
    expect(await cli('dead-letters', 'list', '--destination', 'a')).toMatchObject({
      code: 0,
      stdout: '',
      stderr: 'no dead letters of destination a\n',
    })
    expect(await cli('dead-letters', 'list', '--json')).toMatchObject({ code: 0, stdout: '', stderr: '' })
  })
})
