package esl

import (
	"math/rand/v2"
	"testing"
)

func TestWindowReleasesInSequenceOrder(t *testing.T) {
	tests := []struct {
		name string
		seqs []uint64
	}{
		{"in order", []uint64{1, 2, 3, 4, 5}},
		{"reversed", []uint64{5, 4, 3, 2, 1}},
		{"one late", []uint64{1, 2, 4, 5, 3, 6}},
		{"repeated sequence keeps arrival order", []uint64{3, 1, 3, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w window
			for i, s := range tt.seqs {
				w.insert(queued{seq: s, n: uint64(i + 1)})
			}
			var prev *queued
			for w.len() > 0 {
				q := w.pop()
				if prev != nil && before(&q, prev) {
					t.Fatalf("released seq %d (n %d) after seq %d (n %d)", q.seq, q.n, prev.seq, prev.n)
				}
				prev = &q
			}
		})
	}
}

func TestWindowInterleavedInsertAndPop(t *testing.T) {
	var w window
	next, released := uint64(1), uint64(0)
	for round := range 2000 {
		// A few events, slightly shuffled, then release some of the front.
		batch := []uint64{next, next + 1, next + 2}
		next += 3
		rand.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		for _, s := range batch {
			w.insert(queued{seq: s, n: s})
		}
		for k := round % 5; k > 0 && w.len() > 3; k-- {
			q := w.pop()
			if q.seq != released+1 {
				t.Fatalf("round %d: released %d, want %d", round, q.seq, released+1)
			}
			released = q.seq
		}
	}
	for w.len() > 0 {
		if q := w.pop(); q.seq != released+1 {
			t.Fatalf("drain: released %d, want %d", q.seq, released+1)
		} else {
			released = q.seq
		}
	}
	if released != next-1 {
		t.Fatalf("released %d events, want %d", released, next-1)
	}
}
