package redisurl_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/platform/redistest"
	"github.com/switchboard/switchboard/internal/platform/redisurl"
)

// TestRedisClusterURL starts a private three-master cluster (Debian's
// redis-server) and uses it through a redis+cluster:// URL naming one
// node: the client learns the others and writes each key to the master
// owning its slot.
func TestRedisClusterURL(t *testing.T) {
	url := redistest.StartCluster(t)
	first, _, _ := strings.Cut(url, ",") // the client finds the other masters
	rdb, err := redisurl.Open(first)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()
	for i := range 30 {
		if err := rdb.Set(ctx, fmt.Sprintf("sb:cluster-test:%d", i), i, 0).Err(); err != nil {
			t.Fatalf("set through the cluster: %v", err)
		}
	}
	perMaster := map[string]int{}
	var mu sync.Mutex // ForEachMaster runs fn on every master at once
	err = rdb.(*redis.ClusterClient).ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		n, err := c.DBSize(ctx).Result()
		if err == nil {
			mu.Lock()
			perMaster[c.Options().Addr] = int(n)
			mu.Unlock()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(perMaster) != 3 {
		t.Fatalf("masters %v, want 3", perMaster)
	}
	for addr, n := range perMaster {
		if n == 0 {
			t.Errorf("master %s holds none of 30 keys: the client did not route by slot (%v)", addr, perMaster)
		}
	}
	keys, err := redistest.Keys(ctx, rdb, "sb:cluster-test:*")
	if err != nil || len(keys) != 30 {
		t.Fatalf("scan of every master found %d keys (%v), want 30", len(keys), err)
	}
	if err := redistest.DeleteMatching(ctx, rdb, "sb:cluster-test:*"); err != nil {
		t.Fatal(err)
	}
	if keys, _ := redistest.Keys(ctx, rdb, "sb:cluster-test:*"); len(keys) != 0 {
		t.Fatalf("left after delete: %v", keys)
	}
}
