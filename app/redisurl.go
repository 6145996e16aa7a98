package app

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisClientFor builds the client SWITCHBOARD_REDIS_URL names:
//
//	redis://[user:pass@]host:6379/0                 one server (rediss:// for TLS)
//	redis+sentinel://[user:pass@]s1:26379,s2:26379/mymaster[/0][?password=…]
//	                                                Sentinel: the user and password in
//	                                                the URL are the sentinels'; the
//	                                                master's password goes in ?password=
//	                                                (rediss+sentinel:// for TLS)
//
// With Sentinel the client follows failovers to the new master. Redis
// Cluster is refused: the call tracker's and the XML cache's Lua scripts
// compute their keys inside the script, which a cluster cannot route.
// Other query parameters are go-redis options (dial_timeout=3s, …).
func redisClientFor(raw string) (redis.UniversalClient, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, fmt.Errorf("must be redis://host:port/db or redis+sentinel://host:port,…/master/db")
	}
	switch scheme {
	case "redis", "rediss":
		if hostsOf(rest) > 1 {
			return nil, errCluster
		}
		opts, err := redis.ParseURL(raw)
		if err != nil {
			return nil, err
		}
		setRedisTimeouts(&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout)
		return redis.NewClient(opts), nil
	case "redis+sentinel", "rediss+sentinel":
		opts, err := parseSentinelURL(strings.TrimSuffix(scheme, "+sentinel"), rest)
		if err != nil {
			return nil, err
		}
		setRedisTimeouts(&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout)
		return redis.NewFailoverClient(opts), nil
	case "redis-cluster", "rediss-cluster", "redis+cluster":
		return nil, errCluster
	}
	return nil, fmt.Errorf("unknown scheme %q: use redis://, rediss:// or redis+sentinel://", scheme)
}

var errCluster = fmt.Errorf("redis cluster is not supported (the call tracker's and XML cache's scripts are not cluster-safe yet); use one server or redis+sentinel://")

// hostsOf counts the comma-separated hosts of an URL without its scheme.
func hostsOf(rest string) int {
	end := len(rest)
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		end = i
	}
	hosts := rest[:end]
	if i := strings.LastIndexByte(hosts, '@'); i >= 0 {
		hosts = hosts[i+1:]
	}
	return len(strings.Split(hosts, ","))
}

// parseSentinelURL turns "[userinfo@]s1,s2/master[/db][?q]" into
// go-redis failover options (whose own URL form names the first sentinel
// as the host, the others as addr= and the master as master_name=).
func parseSentinelURL(scheme, rest string) (*redis.FailoverOptions, error) {
	rest, query, _ := strings.Cut(rest, "?")
	authority, path, _ := strings.Cut(rest, "/")
	userinfo, hosts := "", authority
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		userinfo, hosts = authority[:i+1], authority[i+1:]
	}
	addrs := strings.Split(hosts, ",")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) == 0 || parts[0] == "" || len(parts) > 2 {
		return nil, fmt.Errorf("redis+sentinel://: the path must be /<master name>[/<db>]")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("redis+sentinel://: %w", err)
	}
	q.Set("master_name", parts[0])
	for _, a := range addrs[1:] {
		q.Add("addr", a)
	}
	db := "0"
	if len(parts) == 2 {
		db = parts[1]
	}
	opts, err := redis.ParseFailoverURL(scheme + "://" + userinfo + addrs[0] + "/" + db + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("redis+sentinel://: %w", err)
	}
	return opts, nil
}

func setRedisTimeouts(ds ...*time.Duration) {
	for _, d := range ds {
		if *d == 0 {
			*d = 2 * time.Second
		}
	}
}
