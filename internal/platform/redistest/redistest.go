// Package redistest connects tests to the real Redis named by
// SWITCHBOARD_TEST_REDIS_URL (any form Switchboard takes: one server,
// Sentinel or Cluster) and gives them the few whole-keyspace operations
// that differ on a Redis Cluster, where every master holds part of the
// keys and SCAN or KEYS on one connection sees only that master's share.
package redistest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/platform/redisurl"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// EnvURL is the variable naming the test Redis.
const EnvURL = "SWITCHBOARD_TEST_REDIS_URL"

// Open connects to url (any SWITCHBOARD_REDIS_URL form) and closes the
// client at the end of the test. An unreachable server skips the test, or
// fails it when CI is set.
func Open(tb testing.TB, url string) redis.UniversalClient {
	tb.Helper()
	rdb, err := redisurl.Open(url)
	if err != nil {
		tb.Fatalf("redis url %q: %v", url, err)
	}
	tb.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		if os.Getenv("CI") == "" {
			tb.Skipf("redis unreachable: %v", err)
		}
		tb.Fatalf("redis: %v", err)
	}
	return rdb
}

// FromEnv opens SWITCHBOARD_TEST_REDIS_URL, or returns nil when it is unset.
func FromEnv(tb testing.TB) redis.UniversalClient {
	tb.Helper()
	url := os.Getenv(EnvURL)
	if url == "" {
		return nil
	}
	return Open(tb, url)
}

// IsCluster reports whether rdb talks to a Redis Cluster.
func IsCluster(rdb redis.UniversalClient) bool {
	_, ok := rdb.(*redis.ClusterClient)
	return ok
}

// eachMaster runs fn on every master of a cluster, or on rdb itself.
func eachMaster(ctx context.Context, rdb redis.UniversalClient, fn func(context.Context, redis.UniversalClient) error) error {
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return fn(ctx, c) })
	}
	return fn(ctx, rdb)
}

// Keys returns every key matching pattern, on every master of a cluster.
func Keys(ctx context.Context, rdb redis.UniversalClient, pattern string) ([]string, error) {
	var mu sync.Mutex
	var out []string
	err := eachMaster(ctx, rdb, func(ctx context.Context, c redis.UniversalClient) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("scan %q: %w", pattern, err)
	}
	return out, nil
}

// DeleteMatching deletes every key matching pattern. Keys go one DEL each
// (pipelined) so no command spans two slots.
func DeleteMatching(ctx context.Context, rdb redis.UniversalClient, pattern string) error {
	keys, err := Keys(ctx, rdb, pattern)
	if err != nil || len(keys) == 0 {
		return err
	}
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Del(ctx, k)
		}
		return nil
	})
	return err
}

// StartCluster starts a private three-master Redis Cluster from the
// redis-server and redis-cli on PATH (Debian's redis-server package) in a
// temporary directory, waits until it serves every slot, and returns its
// redis+cluster:// URL. Without redis-server the test is skipped, or fails
// when CI is set.
func StartCluster(tb testing.TB) string {
	tb.Helper()
	server, err := exec.LookPath("redis-server")
	if err == nil {
		_, err = exec.LookPath("redis-cli")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatal("redis-server / redis-cli not installed")
		}
		tb.Skip("redis-server / redis-cli not installed")
	}
	dir := tb.TempDir()
	var addrs []string
	for i := range 3 {
		port := freeClusterPort(tb)
		nodeDir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.Mkdir(nodeDir, 0o700); err != nil {
			tb.Fatal(err)
		}
		cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--save", "", "--appendonly", "no")
		cmd.Dir = nodeDir
		if err := cmd.Start(); err != nil {
			tb.Fatalf("start redis-server: %v", err)
		}
		tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(port))
	}
	for _, a := range addrs {
		waitListening(tb, a)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	if out, err := exec.Command("redis-cli", append(args, "--cluster-yes")...).CombinedOutput(); err != nil {
		tb.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	// Every node must see every slot assigned before a test writes: asked
	// through the cluster client, one node saying cluster_state:ok was
	// taken for the whole cluster, and on a loaded machine a write that
	// reached a node still learning the slots failed with CLUSTERDOWN.
	for _, a := range addrs {
		node := redis.NewClient(&redis.Options{Addr: a})
		tb.Cleanup(func() { _ = node.Close() })
		wait.Until(tb, 20*time.Second, "cluster_state:ok on "+a, func() bool {
			info, _ := node.ClusterInfo(context.Background()).Result()
			return strings.Contains(info, "cluster_state:ok")
		})
	}
	return "redis+cluster://" + strings.Join(addrs, ",")
}

// freeClusterPort finds a port that is free together with the cluster bus
// port 10000 above it (which must stay below 65536).
func freeClusterPort(tb testing.TB) int {
	tb.Helper()
	for range 100 {
		port := 20000 + rand.IntN(20000)
		if listenable(port) && listenable(port+10000) {
			return port
		}
	}
	tb.Fatal("no free port pair for a cluster node")
	return 0
}

func listenable(port int) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func waitListening(tb testing.TB, addr string) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server at %s: %v", addr, errors.Unwrap(err))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// HashTag is the part of key Redis Cluster hashes to pick its slot: the
// text between the first '{' and the next '}' when that is not empty,
// else the whole key. Keys with the same hash tag share a slot.
func HashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

// SameSlot fails the test unless every key has the same hash tag.
func SameSlot(tb testing.TB, keys ...string) {
	tb.Helper()
	for _, k := range keys[1:] {
		if HashTag(k) != HashTag(keys[0]) {
			tb.Errorf("%q (hash tag %q) and %q (hash tag %q) may live in different cluster slots", keys[0], HashTag(keys[0]), k, HashTag(k))
		}
	}
}
