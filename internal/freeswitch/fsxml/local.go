package fsxml

import (
	"bytes"
	"strings"
	"sync"
)

// localDocs keeps rendered documents in process memory, keyed by the
// generations they were rendered under and the request fields they depend
// on. The key embeds the platform and tenant generations (gens.go), so an
// entry can never be stale: a write bumps a generation and the next fetch
// asks for a different key. A cached fetch costs a parse, a key and a map
// lookup: no I/O, no render.
//
// Memory is bounded by two generations of maps: when the current one
// reaches half the budget it becomes the old one (the previous old one is
// dropped), so entries not asked for during a whole rotation go, and
// entries of superseded configuration generations with them.
type localDocs struct {
	mu       sync.RWMutex
	cur, old map[string][]byte
	bytes    int
	max      int
	// dids maps a DID to its tenant as learnt under one platform
	// generation; a mismatch makes the fetch resolve the DID again.
	dids map[string]didEntry
}

type didEntry struct {
	epoch, pgen uint64
	tenant      string
}

func newLocalDocs(maxBytes int) *localDocs {
	return &localDocs{cur: map[string][]byte{}, old: map[string][]byte{}, max: maxBytes, dids: map[string]didEntry{}}
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

// variants are the key suffixes a document may be stored under: plain,
// per caller ('c'), per minute ('t'), or both. Whether a render reads the
// caller or the clock depends only on the configuration, the request key
// and (for 't') the minute, never on the caller (dialplan flags before it
// reads), so at most one of them can answer a request.
var variants = []string{"", "c", "t", "tc"}

// get returns the document stored under base (gens.appendKey) or one of
// its variants. Variant keys are built in a stack buffer: a map lookup
// with string(bytes) does not allocate.
func (l *localDocs) get(base []byte, lk lookup) []byte {
	var buf [256]byte
	l.mu.RLock()
	defer l.mu.RUnlock()
	if doc := l.cur[string(base)]; doc != nil {
		return doc
	}
	if doc := l.old[string(base)]; doc != nil {
		return doc
	}
	for _, flags := range variants[1:] {
		k := append(buf[:0], base...)
		k = appendVariant(k, flags, lk)
		if doc := l.cur[string(k)]; doc != nil {
			return doc
		}
		if doc := l.old[string(k)]; doc != nil {
			return doc
		}
	}
	return nil
}

// variant is the key suffix of a render that varies with the minute ('t')
// or the caller ('c').
func variant(flags string, lk lookup) string { return string(appendVariant(nil, flags, lk)) }

func appendVariant(b []byte, flags string, lk lookup) []byte {
	if strings.Contains(flags, "t") {
		b = append(append(b, ":t"...), lk.minute...)
	}
	if strings.Contains(flags, "c") {
		b = append(append(b, ":c"...), lk.caller...)
	}
	return b
}

// put stores a copy of doc under key, exactly as long as the document
// (a render's buffer has room to spare, which the budget would not see).
func (l *localDocs) put(key string, doc []byte) {
	doc = bytes.Clone(doc)
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.cur[key]; ok {
		return
	}
	if l.bytes+len(key)+len(doc) > l.max/2 {
		l.old, l.cur, l.bytes = l.cur, map[string][]byte{}, 0
	}
	l.cur[key] = doc
	l.bytes += len(key) + len(doc)
}
