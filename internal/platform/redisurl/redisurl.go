// Package redisurl turns SWITCHBOARD_REDIS_URL into a go-redis client: one
// server, a Sentinel-watched master or a Redis Cluster, all behind
// redis.UniversalClient so the rest of Switchboard does not care which.
package redisurl

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Open builds the client SWITCHBOARD_REDIS_URL names:
//
//	redis://[user:pass@]host:6379/0                 one server (rediss:// for TLS)
//	redis+sentinel://[user:pass@]s1:26379,s2:26379/mymaster[/0][?password=…]
//	                                                Sentinel: the user and password in
//	                                                the URL are the sentinels'; the
//	                                                master's password goes in ?password=
//	                                                (rediss+sentinel:// for TLS)
//	redis+cluster://[user:pass@]h1:7000,h2:7001[?…] Redis Cluster: any reachable nodes
//	                                                (the client learns the rest); no
//	                                                database number, a cluster has only 0
//	                                                (rediss+cluster:// for TLS)
//
// With Sentinel the client follows failovers to the new master; with
// Cluster it routes each command to the master owning its keys' slot and
// follows slot moves and failovers. Other query parameters are go-redis
// options (dial_timeout=3s, …). Nothing is dialled here.
func Open(raw string) (redis.UniversalClient, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, fmt.Errorf("must be redis://host:port/db, redis+sentinel://host:port,…/master/db or redis+cluster://host:port,…")
	}
	switch scheme {
	case "redis", "rediss":
		if hostsOf(rest) > 1 {
			return nil, fmt.Errorf("several hosts need redis+sentinel:// or redis+cluster://")
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
	case "redis+cluster", "rediss+cluster":
		opts, err := parseClusterURL(strings.TrimSuffix(scheme, "+cluster"), rest)
		if err != nil {
			return nil, err
		}
		setRedisTimeouts(&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout)
		return redis.NewClusterClient(opts), nil
	}
	return nil, fmt.Errorf("unknown scheme %q: use redis://, rediss://, redis+sentinel:// or redis+cluster://", scheme)
}

// hostsOf counts the comma-separated hosts of an URL without its scheme.
func hostsOf(rest string) int {
	return len(strings.Split(authorityOf(rest).hosts, ","))
}

// authority is the part of an URL between the scheme and the path.
type authority struct {
	userinfo string // with its trailing '@', or ""
	hosts    string // comma-separated host:port list
}

func authorityOf(rest string) authority {
	end := len(rest)
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		end = i
	}
	a := authority{hosts: rest[:end]}
	if i := strings.LastIndexByte(a.hosts, '@'); i >= 0 {
		a.userinfo, a.hosts = a.hosts[:i+1], a.hosts[i+1:]
	}
	return a
}

// parseClusterURL turns "[userinfo@]h1,h2[/][?q]" into go-redis cluster
// options (whose own URL form names the first node as the host and the
// others as addr=).
func parseClusterURL(scheme, rest string) (*redis.ClusterOptions, error) {
	rest, query, _ := strings.Cut(rest, "?")
	a := authorityOf(rest)
	if path := strings.Trim(rest[len(a.userinfo)+len(a.hosts):], "/"); path != "" && path != "0" {
		return nil, fmt.Errorf("redis+cluster://: a cluster has only database 0, drop /%s", path)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("redis+cluster://: %w", err)
	}
	addrs := strings.Split(a.hosts, ",")
	for _, h := range addrs {
		if h == "" {
			return nil, fmt.Errorf("redis+cluster://: empty host in %q", a.hosts)
		}
	}
	for _, h := range addrs[1:] {
		q.Add("addr", h)
	}
	opts, err := redis.ParseClusterURL(scheme + "://" + a.userinfo + addrs[0] + "?" + q.Encode())
	if err != nil {
		return nil, fmt.Errorf("redis+cluster://: %w", err)
	}
	return opts, nil
}

// parseSentinelURL turns "[userinfo@]s1,s2/master[/db][?q]" into
// go-redis failover options (whose own URL form names the first sentinel
// as the host, the others as addr= and the master as master_name=).
func parseSentinelURL(scheme, rest string) (*redis.FailoverOptions, error) {
	rest, query, _ := strings.Cut(rest, "?")
	a := authorityOf(rest)
	userinfo, path := a.userinfo, rest[len(a.userinfo)+len(a.hosts):]
	addrs := strings.Split(a.hosts, ",")
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
