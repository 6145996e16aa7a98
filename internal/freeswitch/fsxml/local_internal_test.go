package fsxml

import (
	"bytes"
	"fmt"
	"testing"
)

// Issue 28: the document cache keeps its working set whole. Hot documents
// asked for between floods of one-off ones (first registrations, calls to
// numbers never called again) stay answered from memory across many
// rotations of its generations, as long as they fit in half the budget;
// before, a document found in the old generation was not moved forward,
// and every hot one was rendered again every second rotation.
func TestDocumentCacheKeepsItsWorkingSet(t *testing.T) {
	doc := bytes.Repeat([]byte("x"), 1000)
	const budget = docShards * 64 << 10 // 64 KiB a shard: some 30 entries a generation
	l := newLocalDocs(budget)
	hot := make([][]byte, docShards*8) // about 8 a shard: a quarter of a generation
	for i := range hot {
		hot[i] = fmt.Appendf(nil, "hot:%d", i)
		l.put(hot[i], "", lookup{}, doc)
	}
	misses := 0
	for round := range 50 {
		for i := range docShards * 40 { // more than a generation of every shard
			l.put(fmt.Appendf(nil, "cold:%d:%d", round, i), "", lookup{}, doc)
			if i%(docShards*4) == 0 {
				for _, k := range hot {
					if l.get(k, lookup{}) == nil {
						misses++
						l.put(k, "", lookup{}, doc) // rendered again
					}
				}
			}
		}
	}
	if misses > 0 {
		t.Errorf("%d hot documents were dropped and rendered again", misses)
	}
	if got := l.size(); got > budget {
		t.Errorf("the documents take %d bytes; the budget is %d", got, budget)
	}
}
