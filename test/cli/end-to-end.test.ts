import { afterEach, describe, expect, it } from 'vitest'
import { plainEnv, runCli, startDev, startListen, type CliProcess } from '../helpers/cli.js'

const running: CliProcess[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((cli) => cli.stop()))
})

describe('eventwire listen + dev + send, as three processes', () => {
  it('carries a call from the shell to the receiver, signed and verified', async () => {
    const listen = await startListen(['--secret', 's3cret'])
    running.push(listen.cli)
    const dev = await startDev(['--webhook', `${listen.url}/hooks`, '--secret', 's3cret'])
    running.push(dev.cli)

    const env = plainEnv({ EVENTWIRE_ENDPOINT: dev.url, EVENTWIRE_WRITE_KEY: dev.writeKey })
    const sent = await runCli(
      ['send', 'track', '--user', 'u1', '--event', 'Signed Up', '--prop', 'plan=pro', '--json'],
      env,
    )
    expect(sent.code).toBe(0)
    const { messageId } = JSON.parse(sent.stdout) as { messageId: string }

    const arrived = await listen.cli.waitForRecord((record) => record['event'] === 'request')
    expect(arrived).toMatchObject({
      signature: 'verified',
      status: 200,
      path: '/hooks',
      webhookId: messageId,
      payload: { version: 1, type: 'track', userId: 'u1', event: 'Signed Up', properties: { plan: 'pro' } },
    })
    expect(await dev.cli.waitForRecord((record) => record['event'] === 'delivered')).toMatchObject({
      eventId: messageId,
    })

    running.splice(0)
    expect(await dev.cli.stop()).toBe(0)
    expect(await listen.cli.stop()).toBe(0)
    expect(dev.cli.records().at(-1)).toMatchObject({ event: 'stopped', received: 1, delivered: 1, failed: 0 })
    expect(listen.cli.records().at(-1)).toMatchObject({ event: 'stopped', verified: 1, forged: 0 })
  })
})
