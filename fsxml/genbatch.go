package fsxml

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// genBatcher reads generation counters for many concurrent fetches with
// one MGET (group commit): a fetch joins the next read that starts after it
// arrived, so what it sees is never older than its own arrival and a write
// acknowledged before the fetch is always visible. Under load this turns
// one Redis round trip per fetch into one per batch.
type genBatcher struct {
	rdb  redis.UniversalClient
	reqs chan genRequest
	done chan struct{}
}

type genRequest struct {
	ctx  context.Context
	keys []string
	out  chan genResult
}

type genResult struct {
	vals []string
	err  error
}

// maxGenBatch bounds one MGET.
const maxGenBatch = 256

func newGenBatcher(rdb redis.UniversalClient) *genBatcher {
	b := &genBatcher{rdb: rdb, reqs: make(chan genRequest, 1024), done: make(chan struct{})}
	go b.loop()
	return b
}

// close stops the loop; later reads fail with errClosed.
func (b *genBatcher) close() { close(b.done) }

var errClosed = errors.New("xml service closed")

// get returns the values of keys ("" for a missing key).
func (b *genBatcher) get(ctx context.Context, keys []string) ([]string, error) {
	r := genRequest{ctx: ctx, keys: keys, out: make(chan genResult, 1)}
	select {
	case b.reqs <- r:
	case <-b.done:
		return nil, errClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case res := <-r.out:
		return res.vals, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loop takes every request waiting when the previous read finished and
// answers them with one MGET, until close.
func (b *genBatcher) loop() {
	for {
		var first genRequest
		select {
		case first = <-b.reqs:
		case <-b.done:
			return
		}
		batch := []genRequest{first}
	collect:
		for len(batch) < maxGenBatch {
			select {
			case r := <-b.reqs:
				batch = append(batch, r)
			default:
				break collect
			}
		}
		b.read(batch)
	}
}

func (b *genBatcher) read(batch []genRequest) {
	var keys []string
	index := map[string]int{}
	for _, r := range batch {
		for _, k := range r.keys {
			if _, ok := index[k]; !ok {
				index[k] = len(keys)
				keys = append(keys, k)
			}
		}
	}
	// The batch's context: the first request's, detached from its
	// cancellation (other requests depend on the answer) with its deadline
	// kept by the Redis client's own timeouts.
	vals, err := b.rdb.MGet(context.WithoutCancel(batch[0].ctx), keys...).Result()
	for _, r := range batch {
		res := genResult{err: err}
		if err == nil {
			res.vals = make([]string, len(r.keys))
			for i, k := range r.keys {
				if s, ok := vals[index[k]].(string); ok {
					res.vals[i] = s
				}
			}
		}
		r.out <- res
	}
}
