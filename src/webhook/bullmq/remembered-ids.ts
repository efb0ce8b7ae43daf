/**
 * The ids of delivered events, remembered for the de-duplication window in small hashes rather
 * than a key each.
 *
 * A key per id (`SET <prefix>:<name>:de:<jobId> PX window`) cost about 177 bytes of Redis per
 * delivered event: the key's own object, its entry in the keyspace and in the expiry table. Here
 * the window is cut into {@link SPANS_PER_WINDOW} spans. The ids delivered in one span go into
 * hashes of that span, each id a field with an empty value, spread over `2^bits` shards by a hash
 * of the id. `bits` is chosen when the span starts, from how many ids the span before it took, so
 * that a shard holds about {@link IDS_PER_SHARD} ids: few enough for Redis to keep the hash as a
 * listpack (its compact encoding, up to 128 fields by default), many enough to share the key's
 * cost. Each shard expires as a whole, a window after its span ends. An id is then remembered for
 * at least the window, and at most a quarter more.
 *
 * Keys, all under the queue's `<prefix>:<name>` (so in its slot of a Redis Cluster):
 * - `:seen-windows`: a set of the windows (ms) in use, which lookups go through;
 * - `:seen:<window>:<span>`: the span's hash of `bits` and `ids` (how many it took);
 * - `:seen:<window>:<span>:<shard>`: the span's ids of one shard, numbered from `2^bits` up.
 *
 * The spans are counted on Redis's clock (TIME in the scripts), as the key per id was timed by
 * Redis's expiry: no worker's or producer's clock is read.
 */

/** Spans the window is cut into: an id is remembered for at least the window and at most one span more. */
export const SPANS_PER_WINDOW = 4

/** Ids a shard holds at the pace of the span before: well under the 128 fields of a listpack hash. */
export const IDS_PER_SHARD = 32

/** How far past {@link IDS_PER_SHARD} a span's shards may fill before its later ids take four times as many. */
export const SHARD_GROWTH = 2

/**
 * At most 2^24 shards per span: past a billion ids in one span (46,000 events a second for a
 * quarter of a day), shards grow past the listpack's size and cost about twice as much per id.
 */
export const MAX_SHARD_BITS = 24

/**
 * A 32-bit FNV-1a hash of a job id's UTF-16 code units: which shard holds the id. Producers and
 * workers compute it alike and pass it to the scripts (Lua has no cheap hash of its own).
 */
export function shardHash(jobId: string): number {
  let hash = 0x811c9dc5
  for (let index = 0; index < jobId.length; index++) {
    hash ^= jobId.charCodeAt(index)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

// Redis's clock, in ms, and the span `now` falls in for a window: shared by both scripts.
const SPAN_OF = `
local function redisNow()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local function spanLength(window)
  return math.ceil(window / ${SPANS_PER_WINDOW})
end
`

/**
 * Remembers delivered ids for one window. KEYS[1]: `<prefix>:<name>:seen-windows`; ARGV[1]:
 * `<prefix>:<name>:seen`; ARGV[2]: the window (ms); ARGV[3..]: each job id and its
 * {@link shardHash}. Returns how many it wrote.
 *
 * A span starts with the shards its predecessor's pace calls for (`low`). Should it take more
 * than {@link SHARD_GROWTH} times {@link IDS_PER_SHARD} ids a shard (the first span of a busy
 * queue, a burst), its later ids go to four times as many shards (`bits`): lookups then check
 * each layout of the span, from `low` to `bits`. The shards of a layout of `2^bits` are numbered
 * from `2^bits` to `2^(bits+1) - 1`, so no two layouts share a key and none fills past its share.
 */
export const REMEMBER_IDS_LUA = `${SPAN_OF}
local window = tonumber(ARGV[2])
local span = spanLength(window)
local current = math.floor(redisNow() / span)
local family = ARGV[1] .. ':' .. window .. ':'
local meta = family .. current
-- Expires with the span's shards, after the next span has read how many ids it took.
local expireAt = (current + 1) * span + window
local adding = (#ARGV - 2) / 2
local state = redis.call('HMGET', meta, 'bits', 'ids')
local bits = tonumber(state[1])
local ids = tonumber(state[2] or '0')
if not bits then
  local before = tonumber(redis.call('HGET', family .. (current - 1), 'ids') or '0')
  bits = 0
  while bits < ${MAX_SHARD_BITS} and before > ${IDS_PER_SHARD} * 2 ^ bits do bits = bits + 1 end
  redis.call('HSET', meta, 'low', bits, 'bits', bits)
  redis.call('PEXPIREAT', meta, expireAt + span)
  redis.call('SADD', KEYS[1], window)
elseif bits + 2 <= ${MAX_SHARD_BITS} and ids + adding > ${SHARD_GROWTH * IDS_PER_SHARD} * 2 ^ bits then
  -- Two bits at a time, so that lookups find each layout stepping by two from \`low\`.
  bits = bits + 2
  redis.call('HSET', meta, 'bits', bits)
end
local shards = 2 ^ bits
local base = meta .. ':'
for i = 3, #ARGV, 2 do
  local key = base .. (shards + tonumber(ARGV[i + 1]) % shards)
  -- The expiry is set once, by the id that made the key: a read, where setting it again would
  -- be one more write for the append-only file and the replicas, per id.
  if redis.call('HSET', key, ARGV[i], '') == 1 and redis.call('HLEN', key) == 1 then
    redis.call('PEXPIREAT', key, expireAt)
  end
end
redis.call('HINCRBY', meta, 'ids', adding)
return adding
`

/**
 * The Lua a lookup opens with: `rememberedIn()` lists the shards (their keys' base and count) of
 * every layout of every span of every window in use that may hold an id now; `remembered(checks, id, hash)` says whether one does.
 * `base` (`<prefix>:<name>`) is defined before it.
 */
export const REMEMBERED_FUNCTIONS = `${SPAN_OF}
local function rememberedIn()
  local checks = {}
  local windows = redis.call('SMEMBERS', base .. ':seen-windows')
  if #windows == 0 then return checks end
  local now = redisNow()
  for _, window in ipairs(windows) do
    local span = spanLength(tonumber(window))
    local current = math.floor(now / span)
    for at = current - ${SPANS_PER_WINDOW}, current do
      local meta = base .. ':seen:' .. window .. ':' .. at
      local layout = redis.call('HMGET', meta, 'low', 'bits')
      if layout[2] then
        for bits = tonumber(layout[1]), tonumber(layout[2]), 2 do
          checks[#checks + 1] = { meta .. ':', 2 ^ bits }
        end
      end
    end
  end
  return checks
end
local function remembered(checks, id, hash)
  for _, check in ipairs(checks) do
    if redis.call('HEXISTS', check[1] .. (check[2] + hash % check[2]), id) == 1 then return true end
  end
  return false
end
`
