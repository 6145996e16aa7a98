package fsxml

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
)

// localDocs keeps rendered documents in process memory, keyed by their
// full Redis key. That key embeds the platform and tenant generations, so an
// entry can never be stale: a write bumps a generation and the next fetch
// asks for a different key. A cached fetch then costs one MGET of the two
// generation counters (a plain command, far cheaper for Redis than the
// lookup script) and no document transfer. Only plain documents under their
// key live here, including time- and caller-dependent renders under their
// minute and caller. For the public context the DID's tenant is remembered
// per platform generation, so it takes the same path.
type localDocs struct {
	mu    sync.RWMutex
	docs  map[string][]byte
	bytes int
	max   int
	// dids maps a DID to its tenant as learnt under one platform
	// generation of one Redis dataset; a mismatch sends the fetch back to
	// the lookup script.
	dids map[string]didEntry
}

type didEntry struct{ epoch, pgen, tenant string }

// maxDIDs bounds the DID map; past it the map starts over.
const maxDIDs = 200000

func newLocalDocs(maxBytes int) *localDocs {
	return &localDocs{docs: map[string][]byte{}, max: maxBytes, dids: map[string]didEntry{}}
}

func (l *localDocs) did(number string) (didEntry, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	e, ok := l.dids[number]
	return e, ok
}

func (l *localDocs) putDID(number string, e didEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.dids) >= maxDIDs {
		l.dids = map[string]didEntry{}
	}
	l.dids[number] = e
}

// get returns the document for l under the generations g, whatever it
// varies with (the variants are tried in the order a render stores them).
func (l *localDocs) get(g gens, lk lookup) []byte {
	base := g.localKey(lk)
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, flags := range []string{"", "c", "t", "tc"} {
		if doc := l.docs[base+variant(flags, lk)]; doc != nil {
			return doc
		}
	}
	return nil
}

// variant is the key suffix of a render that varies with the minute ('t')
// or the caller ('c'), as the Redis store names it.
func variant(flags string, lk lookup) string {
	v := ""
	if strings.Contains(flags, "t") {
		v += ":t" + lk.minute
	}
	if strings.Contains(flags, "c") {
		v += ":c" + lk.caller
	}
	return v
}

// put stores doc; when the budget is spent the whole map is dropped, which
// also sheds entries of old generations (they are unreachable anyway).
func (l *localDocs) put(key string, doc []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.docs[key]; ok {
		return
	}
	if l.bytes+len(key)+len(doc) > l.max {
		l.docs, l.bytes = map[string][]byte{}, 0
	}
	l.docs[key] = doc
	l.bytes += len(key) + len(doc)
}

// epochKey names a random value that identifies this Redis dataset. Local
// keys include it: if Redis loses its data the generations restart at 0,
// and without the epoch a document cached under an old "0" would be served.
const epochKey = "sb:gen:_epoch"

// gens is what one fast-path read learned.
type gens struct {
	epoch, pgen, tgen string
}

// localKey is where a plain document for l lives in memory.
func (g gens) localKey(l lookup) string {
	return g.epoch + ":" + g.pgen + ":" + g.tgen + ":" + l.key
}

// generations reads the dataset epoch and the platform and tenant
// generations in one MGET; a missing epoch is created (once per dataset).
func (s *Service) generations(ctx context.Context, tenant string) (gens, error) {
	keys := []string{epochKey, genKey("")}
	if tenant != "" {
		keys = append(keys, genKey(tenant))
	}
	vals, err := s.gens.get(ctx, keys)
	if err != nil {
		return gens{}, err
	}
	str := func(i int) string {
		if i < len(vals) {
			return vals[i]
		}
		return ""
	}
	g := gens{epoch: str(0), pgen: str(1), tgen: str(2)}
	if g.pgen == "" {
		g.pgen = "0"
	}
	if g.tgen == "" || tenant == "" {
		g.tgen = "0"
	}
	if g.epoch == "" {
		if err := s.rdb.SetNX(ctx, epochKey, newEpoch(), 0).Err(); err != nil {
			return gens{}, err
		}
		if g.epoch, err = s.rdb.Get(ctx, epochKey).Result(); err != nil {
			return gens{}, err
		}
	}
	return g, nil
}

func newEpoch() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
