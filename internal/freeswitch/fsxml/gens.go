package fsxml

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Generations live in process memory. Each scope (a tenant, or the
// platform as "") has a local generation that goes up by one whenever a
// newer committed change of that scope becomes known here; models and
// documents are keyed by the generations they were read under, so a
// fetch that starts after a change is known asks for other keys and never
// sees an older answer. A change becomes known (notify.go):
//
//   - on the replica that wrote it, synchronously after its commit and
//     before the API answers (Committed), so the writer's very next fetch
//     sees it;
//   - on every other replica when the Redis notification the writer
//     publishes after its commit arrives (before the API answers, so in
//     practice before anything the answer causes);
//   - from the outbox, polled every headsPoll, whatever Redis does.
//
// While the notification subscription is not confirmed (Redis down, a
// reconnect not yet caught up from the outbox) nothing cached is trusted:
// fetches render from the database. A fetch thus reads no shared state
// at all on the hot path: one read-locked map lookup per scope.

// scopeGens holds the local generation of every scope seen.
type scopeGens struct {
	mu sync.RWMutex
	m  map[string]*scopeState
	// seen are the latest change ids observed (of every scope), so the
	// same change arriving again (commit hook, notification, outbox
	// subscriber, poll) moves a generation once. It is a set, not a
	// high-water mark: ids may arrive out of order, and a notification
	// from another installation sharing the Redis server can carry ids
	// our database never gave out; a high-water mark would then hide
	// later writes of our own. An id seen again after it left the set
	// only costs one extra generation (a cache miss), never a stale
	// answer; the set is large enough that the outbox poll, which reads
	// every change again a moment after its writer announced it, finds
	// them all still there.
	seen    map[int64]struct{}
	seenLog [seenIDs]int64 // the set's ids in arrival order, a ring
	seenPos int
	// epoch goes up when everything known must be dropped (a reset
	// notification); it is part of every key.
	epoch atomic.Uint64
}

type scopeState struct {
	gen uint64 // local generation
	// recent are the latest bumps of this scope, oldest first, for
	// updating a model in place instead of reading it again (patch.go).
	recent []bump
}

// bump is what one generation step changed: only the named extensions, or
// (exts nil) anything in the scope.
type bump struct {
	gen  uint64
	exts []string
}

// maxRecent bounds the bumps remembered per scope.
const maxRecent = 16

// seenIDs bounds the change ids remembered for de-duplication.
const seenIDs = 8192

func newScopeGens() *scopeGens {
	g := &scopeGens{m: map[string]*scopeState{}, seen: make(map[int64]struct{}, seenIDs)}
	g.epoch.Store(1)
	return g
}

// gen returns scope's local generation (0 before any change was seen).
func (g *scopeGens) gen(scope string) uint64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if st := g.m[scope]; st != nil {
		return st.gen // observe writes it under the lock
	}
	return 0
}

// observe makes change id of scope known; exts lists the extensions it
// changed when that is all it changed (nil: anything). It reports whether
// the scope's generation moved.
func (g *scopeGens) observe(scope string, id int64, exts []string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.m[scope]
	if st == nil {
		st = &scopeState{}
		g.m[scope] = st
	}
	if _, ok := g.seen[id]; ok {
		return false
	}
	if old := g.seenLog[g.seenPos]; old != 0 {
		delete(g.seen, old)
	}
	g.seen[id] = struct{}{}
	g.seenLog[g.seenPos] = id
	g.seenPos = (g.seenPos + 1) % seenIDs
	st.gen++
	if len(st.recent) == maxRecent {
		st.recent = append(st.recent[:0], st.recent[1:]...)
	}
	st.recent = append(st.recent, bump{gen: st.gen, exts: exts})
	return true
}

// extensionsChanged returns the extensions changed between generations
// from and to of scope when every step in between changed only extensions
// and is still remembered; ok is false otherwise.
func (g *scopeGens) extensionsChanged(scope string, from, to uint64) (names []string, ok bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	st := g.m[scope]
	if st == nil || from >= to || len(st.recent) == 0 || st.recent[0].gen > from+1 {
		return nil, false
	}
	for _, b := range st.recent {
		if b.gen <= from || b.gen > to {
			continue
		}
		if b.exts == nil {
			return nil, false
		}
		names = append(names, b.exts...)
	}
	return names, true
}

// reset drops every model and document at once.
func (g *scopeGens) reset() {
	g.epoch.Add(1)
	stats.resets.Add(1)
}

// all returns the epoch and every scope's generation now.
func (g *scopeGens) all() (epoch uint64, gens map[string]uint64) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	gens = make(map[string]uint64, len(g.m))
	for scope, st := range g.m {
		gens[scope] = st.gen
	}
	return g.epoch.Load(), gens
}

// gens are the generations one fetch's answer is keyed by.
type gens struct {
	epoch, pgen, tgen uint64
	tenant            string // lower-case; "" when tgen is not a tenant's
}

// current returns the generations that apply to tenant ("" for
// platform-only answers).
func (g *scopeGens) current(tenant string) gens {
	tenant = lowerASCII(tenant)
	out := gens{epoch: g.epoch.Load(), tenant: tenant}
	g.mu.RLock()
	if st := g.m[""]; st != nil {
		out.pgen = st.gen
	}
	if tenant != "" {
		if st := g.m[tenant]; st != nil {
			out.tgen = st.gen
		}
	}
	g.mu.RUnlock()
	return out
}

// appendKey appends where a plain document for l lives in memory.
func (g gens) appendKey(b []byte, l lookup) []byte {
	b = strconv.AppendUint(b, g.epoch, 36)
	b = append(b, ':')
	b = strconv.AppendUint(b, g.pgen, 36)
	b = append(b, ':')
	b = strconv.AppendUint(b, g.tgen, 36)
	b = append(b, ':')
	return append(b, l.key...)
}

// lowerASCII is strings.ToLower without an allocation for names that are
// already lower case (tenant names usually are).
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return strings.ToLower(s)
		}
	}
	return s
}
