import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { REDIS } from './helpers/services.js'
import { OUTSIDE_HELPERS, OUTSIDE_SUITES, outsideUnit } from './helpers/unit-selection.js'

describe('npm run test:unit', () => {
  it('names helpers and suites that exist: a renamed helper would let its suites in', () => {
    const named = [...Object.keys(OUTSIDE_HELPERS), ...Object.keys(OUTSIDE_SUITES)]
    expect(named.filter((path) => !existsSync(new URL(`../${path}`, import.meta.url)))).toEqual([])
  })

  it('leaves out every suite that services.ts says needs Redis', () => {
    const outside = outsideUnit()
    const redisSuites = REDIS.suites.map((suite) => suite.split(' ')[0] ?? '')
    expect(redisSuites.filter((suite) => !outside.has(suite))).toEqual([])
  })
})
