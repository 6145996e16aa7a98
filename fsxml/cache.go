package fsxml

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cached documents live under
//
//	sb:xml:<platform gen>:<tenant gen>:<request key>
//
// so a write (which bumps a generation) makes every older entry
// unreachable at once. A value is "D"+document, or "V"+flags when the
// render varies with the time ('t': the minute) or the caller ('c'); the
// document then sits under <key>:t<minute> and/or :c<caller>. The public
// context learns its tenant from sb:did:<platform gen>:<number> ("-" for an
// unknown DID). Everything is read by one script: one round trip per fetch.
// The script builds key names from values, which works on a single Redis
// or Sentinel but not on Redis Cluster.
var lookupScript = redis.NewScript(`
local p = redis.call('GET', 'sb:cgen:_platform') or '0'
local tenant = ARGV[1]
if ARGV[2] ~= '' then
  local m = redis.call('GET', 'sb:did:' .. p .. ':' .. ARGV[2])
  if not m then return {p, '', '', '', '0', ''} end
  if m == '-' then tenant = '' else tenant = m end
end
local t = '0'
if tenant ~= '' then t = redis.call('GET', 'sb:cgen:' .. tenant) or '0' end
local base = 'sb:xml:' .. p .. ':' .. t .. ':' .. ARGV[3]
local v = redis.call('GET', base)
local vflags = ''
if v and string.sub(v, 1, 1) == 'V' then
  vflags = string.sub(v, 2)
  local k = base
  if string.find(v, 't', 2, true) then k = k .. ':t' .. ARGV[4] end
  if string.find(v, 'c', 2, true) then k = k .. ':c' .. ARGV[5] end
  v = redis.call('GET', k)
end
return {p, t, tenant, v or '', '1', vflags}
`)

// storeScript saves a document; for varying renders it merges the flags
// with those already recorded for the key, so the marker only widens.
var storeScript = redis.NewScript(`
local flags = ARGV[1]
local k = KEYS[1]
if flags ~= '' then
  local v = redis.call('GET', KEYS[1])
  if v and string.sub(v, 1, 1) == 'V' then
    if string.find(v, 't', 2, true) and not string.find(flags, 't', 1, true) then flags = flags .. 't' end
    if string.find(v, 'c', 2, true) and not string.find(flags, 'c', 1, true) then flags = flags .. 'c' end
  end
  redis.call('SET', KEYS[1], 'V' .. flags, 'EX', ARGV[5])
  if string.find(flags, 't', 1, true) then k = k .. ':t' .. ARGV[2] end
  if string.find(flags, 'c', 1, true) then k = k .. ':c' .. ARGV[3] end
end
redis.call('SET', k, 'D' .. ARGV[4], 'EX', ARGV[5])
if ARGV[6] ~= '' then redis.call('SET', ARGV[6], ARGV[7], 'EX', ARGV[5]) end
return 1
`)

// lookup is one cache probe.
type lookup struct {
	tenant string // lower-case tenant name, "" for platform-only documents
	did    string // public context: the dialled DID digits
	key    string // request key (section and the fields the render uses)
	minute string
	caller string
}

// hit is what the probe found: the generations to store a render under and
// the document if one was cached.
type hit struct {
	pgen, tgen string
	tenant     string
	doc        []byte
	didKnown   bool   // false when the public context's DID was not mapped yet
	flags      string // "" for a plain document, else what it varies with
}

func (s *Service) probe(ctx context.Context, l lookup) (hit, error) {
	res, err := lookupScript.Run(ctx, s.rdb, nil, l.tenant, l.did, l.key, l.minute, l.caller).Slice()
	if err != nil {
		return hit{}, fmt.Errorf("xml cache lookup: %w", err)
	}
	if len(res) != 6 {
		return hit{}, fmt.Errorf("xml cache lookup: %d values", len(res))
	}
	str := func(i int) string { v, _ := res[i].(string); return v }
	h := hit{pgen: str(0), tgen: str(1), tenant: str(2), didKnown: str(4) == "1", flags: str(5)}
	if v := str(3); len(v) > 0 && v[0] == 'D' {
		h.doc = []byte(v[1:])
	}
	return h, nil
}

// save stores doc under the generations read before the render. flags is
// "", "t", "c" or "tc"; didTenant, for a public render, records the DID's
// tenant ("-" for none).
func (s *Service) save(ctx context.Context, h hit, l lookup, flags string, doc []byte, ttl time.Duration, didTenant string) error {
	base := "sb:xml:" + h.pgen + ":" + h.tgen + ":" + l.key
	var didKey string
	if l.did != "" && didTenant != "" {
		didKey = "sb:did:" + h.pgen + ":" + l.did
	}
	err := storeScript.Run(ctx, s.rdb, []string{base}, flags, l.minute, l.caller, doc,
		strconv.Itoa(int(ttl/time.Second)), didKey, didTenant).Err()
	if err != nil {
		return fmt.Errorf("xml cache store: %w", err)
	}
	return nil
}

// genOf reads one generation (used when a public fetch learns its tenant
// only from the database).
func (s *Service) genOf(ctx context.Context, tenant string) (string, error) {
	v, err := s.rdb.Get(ctx, genKey(tenant)).Result()
	if err == redis.Nil {
		return "0", nil
	}
	return v, err
}

// keyPart keeps request-derived key parts bounded: long ones are hashed.
func keyPart(s string) string {
	if len(s) <= 96 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "h" + hex.EncodeToString(sum[:16])
}
