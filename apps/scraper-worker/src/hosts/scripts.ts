import { LuaScript, REDIS_NOW } from '@scrapejobs/queues';

// Lua run atomically by Redis for the host gate; every time is Redis's clock (ms), so the fleet's
// workers agree whatever their own clocks say. A host's keys:
//   places  sorted set: token → lease expiry; at most `max` live ones
//   state   hash: next (earliest next start), until (end of a pause), level (429/503 in a row),
//           vt (the host's virtual time: the turn of the last place given)
//   queue   sorted set: user waiting now → their turn (virtual finish time)
//   seen    sorted set: user waiting now → presence expiry, refreshed by each ask of theirs
//   tags    sorted set: user → turn, kept only while ahead of vt (a user behind it is at vt)
// Extends a key's expiry to at least `ms`, never shortening it.
const KEEP = `
local function keep(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, math.ceil(ms)) end
end`;

/**
 * KEYS: places, state, queue, seen, tags. ARGV: user, token, max places, lease ms, ms between
 * starts (0: none), presence ms, ms to keep the host's turns, '1' when the caller is the user's
 * last waiter in its process. Returns {1} with the place taken (the user then stops waiting if it
 * was the last), or {0, reason, ms until it may change (-1: unknown)}, the user then counted as
 * waiting until the presence ms (past the pause or start it waits for) have passed.
 *
 * Fair share: a user's turn is max(its tag, vt); a place goes only to a user whose turn is no
 * later than that of any user waiting now, and moves the user's turn one on. A newcomer's turn
 * is vt, the earliest there is, so it goes next; one that stops waiting keeps its turn while it
 * is ahead, so leaving and asking again gains nothing.
 */
export const TAKE = new LuaScript(`${REDIS_NOW}${KEEP}
local user = ARGV[1]
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)) do
  redis.call('ZREM', KEYS[3], gone)
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local state = redis.call('HMGET', KEYS[2], 'until', 'next', 'vt')
local vt = tonumber(state[3]) or 0
local turn = math.max(tonumber(redis.call('ZSCORE', KEYS[5], user)) or vt, vt)

local function refuse(reason, at)
  local presence = math.max(at, now) + tonumber(ARGV[6])
  redis.call('ZADD', KEYS[4], presence, user)
  redis.call('ZADD', KEYS[3], turn, user)
  keep(KEYS[4], presence - now)
  keep(KEYS[3], presence - now)
  if at > 0 then return {0, reason, math.ceil(at - now)} end
  return {0, reason, -1}
end

local pausedUntil = tonumber(state[1]) or 0
if pausedUntil > now then return refuse('paused', pausedUntil) end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return refuse('full', 0) end
local interval = tonumber(ARGV[5])
local nextStart = tonumber(state[2]) or 0
if interval > 0 and nextStart > now then return refuse('rate', nextStart) end
local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
if first[2] and math.max(tonumber(first[2]), vt) < turn then return refuse('turn', 0) end

local lease = tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], now + lease, ARGV[2])
redis.call('PEXPIRE', KEYS[1], lease)
if interval > 0 then redis.call('HSET', KEYS[2], 'next', now + interval) end
redis.call('HSET', KEYS[2], 'vt', turn)
redis.call('ZADD', KEYS[5], turn + 1, user)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', turn)
if ARGV[8] == '1' then
  redis.call('ZREM', KEYS[3], user)
  redis.call('ZREM', KEYS[4], user)
else
  redis.call('ZADD', KEYS[3], 'XX', turn + 1, user)
end
-- The turns are relative to vt: they expire together, or vt outlives them.
redis.call('PEXPIRE', KEYS[5], ARGV[7])
keep(KEYS[2], tonumber(ARGV[7]))
return {1}`);

/**
 * KEYS: places, state, paused hosts (host → end of its pause), queue. ARGV: host, token, status
 * ('' for none), pause ms from Retry-After (-1: none), ms to keep the host's state, channel. Gives
 * the place back and, for a 429 or 503, pauses the host: for Retry-After, else 1 s doubling to
 * 60 s with each such answer in a row. A pause never shortens one already set; another status ends
 * the row. Announces the freed place on the channel when a user waits for one: a waiter is in the
 * queue from its first refusal (TAKE) until it leaves, so no other worker needs the news.
 */
export const RELEASE = new LuaScript(`${REDIS_NOW}${KEEP}
local removed = redis.call('ZREM', KEYS[1], ARGV[2])
local status = tonumber(ARGV[3])
if status == 429 or status == 503 then
  local level = tonumber(redis.call('HGET', KEYS[2], 'level')) or 0
  local pause = tonumber(ARGV[4])
  if pause < 0 then pause = math.min(1000 * 2 ^ level, 60000) end
  redis.call('HSET', KEYS[2], 'level', math.min(level + 1, 16))
  local current = tonumber(redis.call('HGET', KEYS[2], 'until')) or 0
  local ends = math.max(current, now + pause)
  if pause > 0 and ends > current then
    redis.call('HSET', KEYS[2], 'until', ends)
    redis.call('ZADD', KEYS[3], 'GT', ends, ARGV[1])
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
    keep(KEYS[3], ends - now)
  end
  keep(KEYS[2], ends - now + tonumber(ARGV[5]))
elseif status then
  redis.call('HDEL', KEYS[2], 'level')
end
if removed == 1 and redis.call('ZCARD', KEYS[4]) > 0 then redis.call('PUBLISH', ARGV[6], ARGV[1]) end
return removed`);

/** KEYS: the places of each host held. ARGV: lease ms, then per key its token count and tokens. */
export const RENEW = new LuaScript(`${REDIS_NOW}
local lease = tonumber(ARGV[1])
local at = 2
for _, key in ipairs(KEYS) do
  local count = tonumber(ARGV[at])
  for i = at + 1, at + count do redis.call('ZADD', key, 'XX', now + lease, ARGV[i]) end
  redis.call('PEXPIRE', key, lease)
  at = at + count + 1
end
return 1`);

/** KEYS: queue, seen. ARGV: user. The user stops waiting here (its turn is kept in tags). */
export const LEAVE = new LuaScript(`
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1`);
