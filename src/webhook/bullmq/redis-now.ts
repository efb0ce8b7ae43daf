/**
 * The opening of every eventwire script that reads the time: Redis's own `TIME` as whole ms since
 * the epoch, in `now`. One clock for every worker, whatever each worker's own clock says; what a
 * script gives back is a duration or a time on this clock.
 */
export const REDIS_NOW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
`
