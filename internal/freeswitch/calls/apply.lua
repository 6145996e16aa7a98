-- apply.lua merges one patch into a channel record atomically. ARGV holds the
-- patch fields in the order of patchFields (patch.go); the line NewTracker
-- prepends to this source names them as the table p. A record is stored as
-- "<public JSON>\n<internal JSON>": the public part is the Channel shown to
-- users and published as is; the internal part ("_" in Lua) holds the merge
-- state: g (last Event-Sequence per field group), lr (lifecycle rank), br
-- (bridged), held, su (start, unix microseconds), ended, stub.
-- Returns {changed (0/1), envelope...}: the envelopes it queued, in order
-- (call.started, call.answered, then the CDR).
--
-- KEYS (Tracker.scriptKeys builds them; all share the prefix's hash tag,
-- so on Redis Cluster they live in one slot):
--   1 ch:<member>           the channel's record
--   2 cdr:once:<member>     its CDR guard
--   3 chres:<member>        an id reserved for it
--   4 chseq:<tenant>        the event's tenant's id counter
--   5 live                  6 live:<tenant>     7 live:node:<node>
--   8 cdr:pending           9 stream
--  10 ch:<node>:<peer>     11 cdr:once:<node>:<peer>  (the event's peer)
-- Names that come from stored data only the script reads (a new channel's
-- id, its aliases, a peer or tenant remembered in the record) are formed
-- with dyn() from the same prefix and hash tag: the same slot, which
-- Redis Cluster accepts.
local pre = p.prefix
local kind = p.kind
local seq = tonumber(p.seq)
local ttl = tonumber(p.ttl)
local member = p.node .. ':' .. p.uuid
local key = KEYS[1]
local liveAll, liveTenant, liveNode = KEYS[5], KEYS[6], KEYS[7]
local stream = KEYS[9]

local function dyn(name) return pre .. name end

-- tenantLive is the live set of tenant: the declared one for the event's.
local function tenantLive(tenant)
  if tenant == p.tenant then return liveTenant end
  return dyn('live:' .. tenant)
end

local dirty = {}   -- records whose public fields changed (save and publish)
local touched = {} -- records whose internal state changed (save)

local function load(k)
  local raw = redis.call('GET', k)
  if not raw then return nil end
  local i = string.find(raw, '\n', 1, true)
  local r = cjson.decode(string.sub(raw, 1, i - 1))
  r._ = cjson.decode(string.sub(raw, i + 1))
  return r
end

-- encode returns the public JSON and the full stored value of r.
local function encode(r)
  local x = r._
  r._ = nil
  local pub = cjson.encode(r)
  r._ = x
  return pub, pub .. '\n' .. cjson.encode(x)
end

-- ended reports whether record r (or, when nil, the channel whose CDR
-- guard is onceKey) has ended.
local function ended(r, onceKey)
  if r then return r._.ended == true end
  return redis.call('EXISTS', onceKey) == 1
end

local function put(r, k, v)
  if v ~= nil and r[k] ~= v then
    r[k] = v
    dirty[r] = true
  end
end

local function putNE(r, k, v)
  if v ~= nil and v ~= '' then put(r, k, v) end
end

local function fill(r, k, v)
  if (r[k] == nil or r[k] == '') and v ~= nil and v ~= '' then put(r, k, v) end
end

local function setI(r, k, v)
  if r._[k] ~= v then
    r._[k] = v
    touched[r] = true
  end
end

-- newer reports whether this event is newer than the last one applied to the
-- field group of r, and records it if so.
local function newer(r, group)
  local last = r._.g[group]
  if last == nil or seq > last then
    r._.g[group] = seq
    touched[r] = true
    return true
  end
  return false
end

local lifeNames = {[0] = 'ringing', [1] = 'ringing', [2] = 'early', [3] = 'answered'}

local function derive(r)
  local x = r._
  if x.ended then return 'hangup' end
  if x.held then return 'held' end
  if x.br then return 'bridged' end
  return lifeNames[x.lr or 0] or 'answered'
end

-- publish appends the change to the change stream (Tracker.TrimStream
-- keeps it to the retention).
local function publish(typ, r, pub)
  local msg = '{"type":"' .. typ .. '","channel":' .. pub .. '}'
  redis.call('XADD', stream, '*', 'tenant', r.tenant or '', 'msg', msg)
end

local function applyBridge(r, on, peer)
  if not newer(r, 'b') then return end
  setI(r, 'br', on)
  if on then
    put(r, 'peer_uuid', peer)
    fill(r, 'bridged_at', p.bridged_at)
  else
    put(r, 'peer_uuid', '')
    put(r, 'bridged_to', '')
  end
end

local c = load(key)
if ended(c, KEYS[2]) then return {0} end

if kind == 'resync_end' then
  if not c or not c.id then
    redis.call('SREM', liveNode, member)
    redis.call('ZREM', liveAll, member)
    return {0}
  end
  -- A channel of another FreeSWITCH process (the node restarted) is gone
  -- whatever its age; one of the current process only when it started
  -- before the cutoff (it may have been created after the listing).
  local otherCore = p.core ~= '' and c._.core ~= nil and c._.core ~= p.core
  if not otherCore and tonumber(c._.su) > tonumber(p.cutoff_us) then return {0} end
end
-- A listed channel we already know keeps its event-built state; the listing
-- may only move its lifecycle forward (it may have answered while we were
-- away).
local known = kind == 'resync' and c ~= nil and c.id ~= nil

-- First real sighting: give the channel its identity (c may be a stub made
-- by the peer's bridge event).
local created = false
if not c then c = {node = p.node, uuid = p.uuid, _ = {g = {}}} end
if not c.id then
  -- An id reserved by ReserveID (an originate that answered its API
  -- request before FreeSWITCH's first event) wins over a new one.
  local reserved = redis.call('GET', KEYS[3])
  if reserved then
    c.id = reserved
    redis.call('DEL', KEYS[3])
  else
    local n = redis.call('INCR', KEYS[4]) % 4294967296
    c.id = p.tech .. '/' .. p.name .. '-' .. p.tenant .. '-' .. string.format('%08x', n)
  end
  c.tenant = p.tenant
  c.direction = p.direction
  c.extension = p.extension
  c.context = p.context
  c.call_uuid = p.call_uuid
  c.started_at = p.started_at
  c.caller_id_name = ''
  c.caller_id_number = ''
  c.destination = ''
  c.peer_uuid = c.peer_uuid or ''
  c.bridged_to = c.bridged_to or ''
  c.recording = false
  c.recording_path = ''
  c.state = ''
  c.last_seq = 0
  local x = c._
  x.su = p.started_us
  x.lr = x.lr or 0
  x.br = x.br or false
  x.held = false
  x.stub = nil
  redis.call('SET', dyn('chid:' .. c.id), member)
  created = true
  dirty[c] = true
end

-- A call that started outside any tenant (an inbound DID call routed in
-- context public) enters one later: its first events carry no sb_tenant,
-- the ones after the public dialplan's transfer do. The channel then moves
-- to the tenant with an id of the tenant's; the old id stays as an alias.
if not created and (c.tenant == nil or c.tenant == '') and p.tenant ~= '' then
  local n = redis.call('INCR', KEYS[4]) % 4294967296
  local old = c.id
  c.id = p.tech .. '/' .. p.name .. '-' .. p.tenant .. '-' .. string.format('%08x', n)
  c.tenant = p.tenant
  c._.aliases = c._.aliases or {}
  table.insert(c._.aliases, old)
  redis.call('SET', dyn('chid:' .. c.id), member)
  redis.call('ZADD', liveTenant, p.score, member)
  if p.context ~= '' then c.context = p.context end
  fill(c, 'extension', p.extension)
  dirty[c] = true
end

if kind ~= 'resync_end' and p.core ~= '' and c._.core ~= p.core then setI(c, 'core', p.core) end

if not known and newer(c, 'i') then
  putNE(c, 'caller_id_name', p.caller_id_name)
  putNE(c, 'caller_id_number', p.caller_id_number)
  putNE(c, 'destination', p.destination)
end
local rank = tonumber(p.rank)
if rank > (c._.lr or 0) and rank < 9 then setI(c, 'lr', rank) end
fill(c, 'answered_at', p.answered_at)

local peer, peerKey
if kind == 'bridge' or kind == 'unbridge' then
  local on = kind == 'bridge'
  applyBridge(c, on, p.peer)
  if p.peer ~= '' then
    peerKey = KEYS[10]
    peer = load(peerKey)
    if ended(peer, KEYS[11]) then
      peer = nil
    else
      if not peer then peer = {node = p.node, uuid = p.peer, _ = {g = {}, stub = true}} end
      applyBridge(peer, on, p.uuid)
    end
  end
elseif kind == 'hold' or kind == 'unhold' then
  if newer(c, 'h') then setI(c, 'held', kind == 'hold') end
elseif kind == 'record_start' or kind == 'record_stop' then
  if newer(c, 'r') then
    put(c, 'recording', kind == 'record_start')
    putNE(c, 'recording_path', p.record_path)
  end
elseif kind == 'resync' and not known then
  if newer(c, 'h') then setI(c, 'held', p.held == '1') end
end

-- Link bridged_to both ways once both legs have ids.
if c._.br and c.peer_uuid ~= '' and c.bridged_to == '' then
  if not peer then
    if c.peer_uuid == p.peer then
      peerKey = KEYS[10]
    else
      peerKey = dyn('ch:' .. p.node .. ':' .. c.peer_uuid)
    end
    peer = load(peerKey)
  end
  if peer and peer.id then
    put(c, 'bridged_to', peer.id)
    if peer._.br and peer.peer_uuid == c.uuid and not peer._.ended then put(peer, 'bridged_to', c.id) end
  end
end

local ending = kind == 'hangup' or kind == 'resync_end'
if ending then
  c._.ended = true
  put(c, 'recording', false)
end
put(c, 'state', derive(c))

-- Lifecycle events, decided here because only this script sees each
-- transition exactly once (whatever replica applies the event, however
-- often): call.started once the channel has its tenant (or, for one that
-- never gets a tenant, at its answer or end), call.answered at the first
-- answered rank, always after call.started. x.es and x.ea remember them.
local lifecycle = {}
if p.queue_events == '1' and c.id then
  local x = c._
  local answered = (x.lr or 0) >= 3
  if not x.es and ((c.tenant or '') ~= '' or answered or ending) then
    setI(c, 'es', true)
    table.insert(lifecycle, 'call.started')
  end
  if x.es and answered and not x.ea then
    setI(c, 'ea', true)
    table.insert(lifecycle, 'call.answered')
  end
end

-- Every envelope of a channel carries its place n in the channel's order
-- (x.qn counts them), so the deliverers hand them over in that order.
local envelopes = {}
local function nextN()
  c._.qn = (c._.qn or 0) + 1
  return c._.qn
end
local function queueLifecycle(pub)
  for _, typ in ipairs(lifecycle) do
    local env = cjson.encode({event = typ, n = nextN(), queued_at = tonumber(p.now_unix)}) .. '\n' .. pub
    redis.call('RPUSH', KEYS[8], env)
    table.insert(envelopes, env)
  end
end

if dirty[c] or touched[c] then
  if seq > (c.last_seq or 0) then c.last_seq = seq end
  if dirty[c] then c.updated_at = p.now end
end
if ending then
  local pub = encode(c)
  queueLifecycle(pub)
  local cdrN = 0
  if p.queue_cdr == '1' then cdrN = nextN() end
  local _, stored = encode(c)
  redis.call('SET', key, stored, 'EX', ttl)
  redis.call('EXPIRE', dyn('chid:' .. c.id), ttl)
  for _, a in ipairs(c._.aliases or {}) do redis.call('EXPIRE', dyn('chid:' .. a), ttl) end
  redis.call('ZREM', liveAll, member)
  if c.tenant ~= '' then redis.call('ZREM', tenantLive(c.tenant), member) end
  redis.call('SREM', liveNode, member)
  if redis.call('SET', KEYS[2], '1', 'NX', 'EX', p.guard_ttl) and p.queue_cdr == '1' then
    local env = cjson.encode({hangup_cause = p.hangup_cause, ended_at = p.ended_at, duration = tonumber(p.duration),
      billsec = tonumber(p.billsec), n = cdrN, queued_at = tonumber(p.now_unix)}) .. '\n' .. pub
    redis.call('RPUSH', KEYS[8], env)
    table.insert(envelopes, env)
  end
  publish('channel.ended', c, pub)
elseif dirty[c] or touched[c] then
  local pub = encode(c)
  queueLifecycle(pub)
  local _, stored = encode(c)
  redis.call('SET', key, stored)
  if created then
    redis.call('ZADD', liveAll, p.score, member)
    if c.tenant ~= '' then redis.call('ZADD', tenantLive(c.tenant), p.score, member) end
    redis.call('SADD', liveNode, member)
    publish('channel.created', c, pub)
  elseif dirty[c] then
    publish('channel.updated', c, pub)
  end
end

if peer and (dirty[peer] or touched[peer]) then
  if peer.id then
    put(peer, 'state', derive(peer))
    if seq > (peer.last_seq or 0) then peer.last_seq = seq end
    if dirty[peer] then peer.updated_at = p.now end
    local pub, stored = encode(peer)
    redis.call('SET', peerKey, stored)
    if dirty[peer] then publish('channel.updated', peer, pub) end
  else
    local _, stored = encode(peer)
    redis.call('SET', peerKey, stored, 'EX', ttl)
  end
end

local changed = 0
if dirty[c] then changed = 1 end
return {changed, unpack(envelopes)}
