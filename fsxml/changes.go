package fsxml

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/changes"
)

// Cache invalidation follows committed changes. A scope's generation (one
// per tenant, one for the platform) is the outbox id of the last change
// applied to it: raising it to a change's id is idempotent and monotonic,
// so the writer may raise it right after its commit (read-your-writes on
// every replica) and the outbox subscriber raise it again, retried until
// Redis takes it.
//
// In between, a committed change whose raise failed (Redis paused or
// erroring) must never let an older document be served. Every replica
// therefore knows each scope's newest committed change id: its own
// commits at once, other replicas' from polling the outbox. A fetch that
// reads a generation below that id does not trust the cache (its documents
// may predate the change), renders from the database instead, and raises
// the generation itself.

// raiseScript sets KEYS[1] to ARGV[1] unless it already holds at least that.
var raiseScript = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if cur < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
`)

// raise makes scope's generation at least id.
func (s *Service) raise(ctx context.Context, scope string, id int64) error {
	if err := raiseScript.Run(ctx, s.rdb, []string{genKey(scope)}, id).Err(); err != nil {
		return fmt.Errorf("xml cache: raise generation of %q to %d: %w", scope, id, err)
	}
	return nil
}

// scopeOf is the generation scope a change moves: its tenant, or the
// platform ("") for platform resources.
func scopeOf(c changes.Change) string { return strings.ToLower(c.Tenant) }

// Committed is the writer's fast path, called right after its commit: the
// changes' scopes are known to be newer at once, and their generations are
// raised so every replica's next fetch sees the write. Failures are only
// logged: the outbox subscriber retries, and fetches distrust the cache
// until then.
func (s *Service) Committed(ctx context.Context, chs []changes.Change) {
	top := map[string]int64{}
	for _, c := range chs {
		top[scopeOf(c)] = max(top[scopeOf(c)], c.ID)
	}
	s.heads.observe(top)
	if !s.redisUp() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	for scope, id := range top {
		if err := s.raise(ctx, scope, id); err != nil {
			s.warnRedis("xml cache: generation not raised after a write (the outbox retries it)", err)
			return
		}
	}
}

// CacheSubscriber is the outbox subscriber that raises generations; it
// fails (and is retried) until Redis takes the change.
func (s *Service) CacheSubscriber() changes.Subscriber {
	return changes.Func{ID: "xml-cache", Fn: func(ctx context.Context, c changes.Change) error {
		s.heads.observe(map[string]int64{scopeOf(c): c.ID})
		return s.raise(ctx, scopeOf(c), c.ID)
	}}
}

// fresh reports whether documents cached under the platform generation
// pgen and tenant's generation tgen can be trusted: no committed change of
// either scope is newer. When one is, the generation is raised (so the
// next fetch trusts the cache again) and the caller renders from the
// database without caching.
func (s *Service) fresh(ctx context.Context, tenant, pgen, tgen string) bool {
	ok := true
	scopes := []struct{ scope, gen string }{{"", pgen}}
	if tenant != "" {
		scopes = append(scopes, struct{ scope, gen string }{tenant, tgen})
	}
	for _, sc := range scopes {
		head := s.heads.get(sc.scope)
		if head == 0 {
			continue
		}
		g, _ := strconv.ParseInt(sc.gen, 10, 64)
		if g >= head {
			continue
		}
		ok = false
		if err := s.raise(ctx, sc.scope, head); err != nil {
			s.warnRedis("xml cache unavailable", err)
		}
	}
	return ok
}

// heads holds each scope's newest committed change id known here.
type heads struct {
	mu     sync.RWMutex
	m      map[string]int64
	cursor int64 // outbox rows up to here were read
}

func newHeads() *heads { return &heads{m: map[string]int64{}} }

func (h *heads) get(scope string) int64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.m[scope]
}

func (h *heads) observe(top map[string]int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for scope, id := range top {
		h.m[scope] = max(h.m[scope], id)
	}
}

// headsPoll is how often other replicas' commits are read from the outbox.
const headsPoll = 250 * time.Millisecond

// pollHeads reads committed changes newer than the cursor until ctx ends.
func (s *Service) pollHeads(ctx context.Context) {
	t := time.NewTicker(headsPoll)
	defer t.Stop()
	for {
		s.heads.mu.RLock()
		cursor := s.heads.cursor
		s.heads.mu.RUnlock()
		top, last, err := s.st.OutboxHeads(ctx, cursor)
		if err == nil {
			s.heads.observe(top)
			s.heads.mu.Lock()
			s.heads.cursor = max(s.heads.cursor, last)
			s.heads.mu.Unlock()
		} else if ctx.Err() == nil {
			s.log.Warn("xml cache: read outbox heads", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// DirectoryUsers says which FreeSWITCH directory users a change makes
// stale: the extension's user ids (before and after a rename), or all
// (true) when a change reaches every user of a tenant (the tenant itself,
// its emergency locations). Other changes leave the directory alone.
func DirectoryUsers(c changes.Change) (users []string, all bool) {
	switch c.Resource {
	case "tenants":
		return nil, c.Op != changes.Create
	case "emergency_locations":
		return nil, true
	case "extensions":
		seen := map[string]bool{}
		for _, img := range []json.RawMessage{c.Before, c.After} {
			var obj struct {
				Name string `json:"name"`
			}
			if img == nil || json.Unmarshal(img, &obj) != nil || obj.Name == "" || seen[obj.Name] {
				continue
			}
			seen[obj.Name] = true
			users = append(users, obj.Name+"-"+c.Tenant)
		}
		return users, false
	}
	return nil, false
}
