package esl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/platform/keyprefix"
	"github.com/switchboard/switchboard/internal/platform/lease"
)

// DefaultLeaseTTL is the event lease lifetime when none is given.
const DefaultLeaseTTL = 5 * time.Second

// renewScript extends the lease only if this replica still holds it.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

// releaseScript deletes the lease only if this replica holds it.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// RedisLease decides which replica consumes a node's event stream: the
// holder of the Redis key <prefix>esl:lease:<node>. It is taken with
// SET NX PX, renewed every TTL/3 by a compare-and-pexpire script and
// released with compare-and-delete, so a replica never extends or drops a
// lease another replica has taken over. When a holder dies its key expires
// after at most TTL and another replica takes the node.
type RedisLease struct {
	client  redis.UniversalClient
	replica string
	ttl     time.Duration
	prefix  string
}

// NewRedisLease returns a lease keyed on replicaID, which must be unique per
// running replica (e.g. hostname plus a random suffix). keyPrefix starts
// the lease keys (the installation's, so two installations sharing a Redis
// each consume their own node "fs1"; "" means "sb:"). ttl <= 0 means
// DefaultLeaseTTL.
func NewRedisLease(client redis.UniversalClient, keyPrefix, replicaID string, ttl time.Duration) *RedisLease {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	return &RedisLease{client: client, replica: replicaID, ttl: ttl, prefix: keyprefix.OrDefault(keyPrefix) + "esl:lease:"}
}

// TTL returns the lease lifetime.
func (l *RedisLease) TTL() time.Duration { return l.ttl }

// Replica returns this replica's id, the value stored in held keys.
func (l *RedisLease) Replica() string { return l.replica }

// Key returns the Redis key of node's lease.
func (l *RedisLease) Key(node string) string { return l.prefix + node }

// Holder returns the replica holding node's lease, "" when none does.
func (l *RedisLease) Holder(ctx context.Context, node string) (string, error) {
	v, err := l.client.Get(ctx, l.Key(node)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("esl lease holder %s: %w", node, err)
	}
	return v, nil
}

// Acquire takes node's lease if it is free, or renews it if this replica
// already holds it (after a restart with the same id). It reports whether
// this replica holds the lease afterwards.
func (l *RedisLease) Acquire(ctx context.Context, node string) (bool, error) {
	ok, err := l.client.SetNX(ctx, l.Key(node), l.replica, l.ttl).Result()
	if err != nil {
		return false, fmt.Errorf("acquire esl lease %s: %w", node, err)
	}
	if ok {
		return true, nil
	}
	return l.Renew(ctx, node)
}

// Renew extends node's lease by TTL if this replica holds it; false means
// the lease is lost.
func (l *RedisLease) Renew(ctx context.Context, node string) (bool, error) {
	n, err := renewScript.Run(ctx, l.client, []string{l.Key(node)}, l.replica, l.ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("renew esl lease %s: %w", node, err)
	}
	return n == 1, nil
}

// Release gives node's lease up if this replica holds it.
func (l *RedisLease) Release(ctx context.Context, node string) error {
	err := releaseScript.Run(ctx, l.client, []string{l.Key(node)}, l.replica).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("release esl lease %s: %w", node, err)
	}
	return nil
}

// Node returns node's lease as a lease.Lease, for a lease.Holder.
func (l *RedisLease) Node(node string) lease.Lease { return nodeLease{l: l, node: node} }

// nodeLease is one node's lease.
type nodeLease struct {
	l    *RedisLease
	node string
}

func (n nodeLease) Acquire(ctx context.Context) (bool, error) { return n.l.Acquire(ctx, n.node) }
func (n nodeLease) Renew(ctx context.Context) (bool, error)   { return n.l.Renew(ctx, n.node) }
func (n nodeLease) Release(ctx context.Context) error         { return n.l.Release(ctx, n.node) }
func (n nodeLease) TTL() time.Duration                        { return n.l.ttl }
func (n nodeLease) Name() string                              { return n.l.Key(n.node) }
