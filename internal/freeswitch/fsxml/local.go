package fsxml

import (
	"bytes"
	"hash/maphash"
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
// The documents are spread over docShards shards by their key (without
// its variant suffix, so a key and its variants share a shard), each
// with its own lock: a render's put takes the write lock, which under a
// single lock stalled every cached fetch behind it (seen in the mutex
// profile of random calls, issue 28).
//
// Memory is bounded per shard by two generations of maps: when the
// current one reaches half the shard's budget it becomes the old one (the
// previous old one is dropped), so entries not asked for during a whole
// rotation go, and entries of superseded configuration generations with
// them. An entry found in the old generation moves to the current one: a
// working set up to half the budget stays whole across rotations (without
// the move, every hot document was rendered again every second rotation).
// An entry counts what it takes in memory: its key, its document's
// allocation and the map's share (entryOverhead).
type localDocs struct {
	shards [docShards]docShard
	seed   maphash.Seed

	didMu sync.RWMutex
	// dids maps a DID to its tenant as learnt under one platform
	// generation; a mismatch makes the fetch resolve the DID again.
	dids map[string]didEntry
}

// docShards is a power of two well above the cores a replica has.
const docShards = 32

type docShard struct {
	mu       sync.RWMutex
	cur, old map[string][]byte
	bytes    int
	max      int
	_        [64]byte // keeps neighbouring shards' locks off one cache line
}

type didEntry struct {
	epoch, pgen uint64
	tenant      string
}

func newLocalDocs(maxBytes int) *localDocs {
	l := &localDocs{seed: maphash.MakeSeed(), dids: map[string]didEntry{}}
	for i := range l.shards {
		l.shards[i] = docShard{cur: map[string][]byte{}, old: map[string][]byte{}, max: maxBytes / docShards}
	}
	return l
}

func (l *localDocs) shard(base []byte) *docShard {
	return &l.shards[maphash.Bytes(l.seed, base)&(docShards-1)]
}

func (l *localDocs) did(number string) (didEntry, bool) {
	l.didMu.RLock()
	defer l.didMu.RUnlock()
	e, ok := l.dids[number]
	return e, ok
}

func (l *localDocs) putDID(number string, e didEntry) {
	l.didMu.Lock()
	defer l.didMu.Unlock()
	if len(l.dids) >= maxDIDs {
		l.dids = map[string]didEntry{}
	}
	l.dids[number] = e
}

// clear drops every document.
func (l *localDocs) clear() {
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		sh.cur, sh.old, sh.bytes = map[string][]byte{}, map[string][]byte{}, 0
		sh.mu.Unlock()
	}
}

// size is the bytes of the documents held (keys included).
func (l *localDocs) size() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.RLock()
		n += sh.bytes + sh.oldBytes()
		sh.mu.RUnlock()
	}
	return n
}

func (sh *docShard) oldBytes() int {
	n := 0
	for k, v := range sh.old {
		n += entryBytes(k, v)
	}
	return n
}

// entryOverhead is what a map entry takes besides its key's and its
// document's bytes: the key's and the slice's headers and the map's slot.
const entryOverhead = 16 + 24 + 8

func entryBytes(key string, doc []byte) int { return len(key) + cap(doc) + entryOverhead }

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
	sh := l.shard(base)
	sh.mu.RLock()
	if doc := sh.cur[string(base)]; doc != nil {
		sh.mu.RUnlock()
		return doc
	}
	if doc := sh.old[string(base)]; doc != nil {
		sh.mu.RUnlock()
		sh.promote(string(base))
		return doc
	}
	for _, flags := range variants[1:] {
		k := append(buf[:0], base...)
		k = appendVariant(k, flags, lk)
		if doc := sh.cur[string(k)]; doc != nil {
			sh.mu.RUnlock()
			return doc
		}
		if doc := sh.old[string(k)]; doc != nil {
			sh.mu.RUnlock()
			sh.promote(string(k))
			return doc
		}
	}
	sh.mu.RUnlock()
	return nil
}

// promote moves an entry of the old generation to the current one.
func (sh *docShard) promote(key string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	doc, ok := sh.old[key]
	if !ok {
		return // rotated out or promoted meanwhile
	}
	delete(sh.old, key)
	sh.store(key, doc)
}

func appendVariant(b []byte, flags string, lk lookup) []byte {
	if strings.Contains(flags, "t") {
		b = append(append(b, ":t"...), lk.minute...)
	}
	if strings.Contains(flags, "c") {
		b = append(append(b, ":c"...), lk.caller...)
	}
	return b
}

// put stores a copy of doc under base with the variant suffix of flags,
// exactly as long as the document (a render's buffer has room to spare,
// which the budget would not see).
func (l *localDocs) put(base []byte, flags string, lk lookup, doc []byte) {
	key := string(appendVariant(base, flags, lk))
	doc = bytes.Clone(doc)
	sh := l.shard(base)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.cur[key]; ok {
		return
	}
	sh.store(key, doc)
}

// store adds an entry to the current generation, rotating first when it
// would not fit. A document over a generation's budget is not kept at all.
func (sh *docShard) store(key string, doc []byte) {
	n := entryBytes(key, doc)
	if n > sh.max/2 {
		return
	}
	if sh.bytes+n > sh.max/2 {
		sh.old, sh.cur, sh.bytes = sh.cur, map[string][]byte{}, 0
	}
	sh.cur[key] = doc
	sh.bytes += n
}
