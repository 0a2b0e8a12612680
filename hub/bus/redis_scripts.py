"""The Lua scripts of the Redis bus: each runs atomically inside Redis (``hub.bus.redis``
says why each exists: exactly-once retries, all-or-nothing batches, fenced appends, the
lease with its token)."""

FIELD = b"d"
APPEND_ONCE = """
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if last[1] and last[1][2][1] == ARGV[1] and last[1][2][2] == ARGV[2] then
  return last[1][1]
end
return redis.call('XADD', KEYS[1], '*', ARGV[1], ARGV[2])
"""
# A batch is appended by one script, so it lands all or nothing. KEYS: stream, then the lease
# key and its token key when fenced. ARGV: field, retry flag, fence owner ('' = unfenced),
# fence token ('' = owner only), maxlen ('' = none: MAXLEN ~ trims the stream), items.
# Fenced with a token: refuse if someone else holds the lease or a newer token was issued (a
# lease that merely expired, with no claim since, still lets its last holder write). Without a
# token: refuse unless the lease names the owner. Both atomic with the XADDs below.
# On a retry, a newest entry equal to the batch's last item means the lost attempt landed: the
# ids of the batch's entries are returned instead of adding them again.
APPEND_BATCH = """
if KEYS[2] then
  local holder = redis.call('GET', KEYS[2])
  if ARGV[4] == '' then
    if holder ~= ARGV[3] then
      return redis.error_reply('FENCED the journal lease is held by another writer')
    end
  elseif (holder and holder ~= ARGV[3]) or redis.call('GET', KEYS[3]) ~= ARGV[4] then
    return redis.error_reply('FENCED the journal lease was claimed by another writer')
  end
end
local n = #ARGV - 5
if ARGV[2] == '1' then
  local tail = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', n)
  if #tail == n and tail[1][2][1] == ARGV[1] and tail[1][2][2] == ARGV[#ARGV] then
    local ids = {}
    for i = n, 1, -1 do ids[#ids + 1] = tail[i][1] end
    return ids
  end
end
local ids = {}
for i = 6, #ARGV do
  if ARGV[5] == '' then
    ids[#ids + 1] = redis.call('XADD', KEYS[1], '*', ARGV[1], ARGV[i])
  else
    ids[#ids + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[5], '*', ARGV[1], ARGV[i])
  end
end
return ids
"""
PUBLISH_MANY = """
local counts = {}
for i = 1, #ARGV, 2 do
    counts[#counts + 1] = redis.call('PUBLISH', ARGV[i], ARGV[i + 1])
end
return counts
"""

# Take the lease if free (a new token, or the caller's own if it is still the latest), renew it
# if ours. KEYS: lease, token key. ARGV: owner, ttl in ms, token ('' = new). Returns the token
# held, 0 when the owner may not hold the lease.
CLAIM = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(redis.call('GET', KEYS[2]) or '0')
end
if holder then return 0 end
local latest = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[3] == '' then
  latest = redis.call('INCR', KEYS[2])
elseif tonumber(ARGV[3]) ~= latest then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return latest
"""
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
