package redisurl

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRedisURLForms(t *testing.T) {
	opts, err := parseSentinelURL("redis", ":sentinel-pw@s1:26379,s2:26380,s3:26381/mymaster/3?password=master-pw&dial_timeout=3s")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(opts.SentinelAddrs, []string{"s1:26379", "s2:26380", "s3:26381"}) || opts.MasterName != "mymaster" ||
		opts.DB != 3 || opts.Password != "master-pw" || opts.SentinelPassword != "sentinel-pw" || opts.DialTimeout != 3*time.Second {
		t.Errorf("sentinel options %+v", opts)
	}
	copts, err := parseClusterURL("redis", "u:cluster-pw@h1:7000,h2:7001,h3:7002?dial_timeout=4s")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(copts.Addrs, []string{"h1:7000", "h2:7001", "h3:7002"}) || copts.Username != "u" ||
		copts.Password != "cluster-pw" || copts.DialTimeout != 4*time.Second {
		t.Errorf("cluster options %+v", copts)
	}
	for good, want := range map[string]string{
		"redis://localhost:6379/0":                      "*redis.Client",
		"rediss://u:p@cache:6380/1":                     "*redis.Client",
		"redis+sentinel://s1:26379/mymaster":            "*redis.Client",
		"redis+sentinel://s1:26379,s2:26379/mymaster/2": "*redis.Client",
		"redis+cluster://h1:7000,h2:7001":               "*redis.ClusterClient",
		"redis+cluster://:pw@h1:7000/0?read_timeout=3s": "*redis.ClusterClient",
		"rediss+cluster://h1:7000,h2:7001,h3:7002/":     "*redis.ClusterClient",
	} {
		rdb, err := Open(good)
		if err != nil {
			t.Errorf("%s: %v", good, err)
			continue
		}
		if got := fmt.Sprintf("%T", rdb); got != want {
			t.Errorf("%s: a %s, want %s", good, got, want)
		}
		rdb.Close()
	}
	bad := map[string]string{
		"redis://a:7001,b:7002,c:7003":  "need redis+sentinel:// or redis+cluster://",
		"redis-cluster://a:7001,b:7002": "unknown scheme",
		"redis+cluster://a:7001/3":      "only database 0",
		"redis+cluster://a:7001,,b:1":   "empty host",
		"redis+sentinel://s1:26379":     "master name",
		"memcached://x:11211":           "unknown scheme",
		"localhost:6379":                "must be redis://",
	}
	for raw, want := range bad {
		if _, err := Open(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", raw, err, want)
		}
	}
}

// TestRedisSentinelURLFollowsTheMaster starts a Redis server and a
// Sentinel watching it (Debian's redis-server) and talks to the master
// through a redis+sentinel:// URL.
func TestRedisSentinelURLFollowsTheMaster(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not installed")
		}
		t.Skip("redis-server not installed")
	}
	dir := t.TempDir()
	master, sentinel := freePort(t), freePort(t)
	start := func(args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	start("--port", fmt.Sprint(master), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	conf := filepath.Join(dir, "sentinel.conf")
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\nsentinel monitor sbmaster 127.0.0.1 %d 1\n", sentinel, master)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	start(conf, "--sentinel")

	rdb, err := Open(fmt.Sprintf("redis+sentinel://127.0.0.1:%d/sbmaster/2", sentinel))
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = rdb.Set(ctx, "sb:sentinel-test", "through the sentinel", 0).Err()
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("set through the sentinel: %v", err)
	}
	direct, err := Open(fmt.Sprintf("redis://127.0.0.1:%d/2", master))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if got, err := direct.Get(ctx, "sb:sentinel-test").Result(); err != nil || got != "through the sentinel" {
		t.Fatalf("the master holds %q (%v)", got, err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
