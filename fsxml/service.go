// Package fsxml serves the XML FreeSWITCH fetches through mod_xml_curl
// (POST /fs/xml): it authenticates the node, loads the configuration
// snapshot a request needs from the store, renders it with package dialplan
// and caches the rendered document in Redis under per-tenant and platform
// configuration generations, so a write is visible on the very next fetch
// without deleting anything. It also answers the routing-trace API.
package fsxml

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/dialplan"
	"github.com/switchboard/switchboard/models"
)

// Config holds the installation settings the service needs.
type Config struct {
	// Domain is the installation's one SIP domain.
	Domain string
	// User and Password, when set, are the HTTP Basic credentials
	// mod_xml_curl must send.
	User, Password string
	// Allow, when set, lists the networks whose TCP peers may fetch. With
	// neither credentials nor Allow only loopback peers may fetch.
	Allow []*net.IPNet
	// TTL bounds how long a rendered document stays in Redis (default 10 min).
	TTL time.Duration
	// DefaultTimezone applies when neither schedule nor tenant names a zone.
	DefaultTimezone string
	// SoundsDir is where tenant prompt files live on the nodes.
	SoundsDir string
}

// Service renders and caches FreeSWITCH XML. It is safe for concurrent use.
type Service struct {
	st   *models.Store
	rdb  redis.UniversalClient
	cfg  Config
	opts dialplan.Options
	log  *slog.Logger
	// now is the clock; tests may replace it before serving.
	now func() time.Time

	// local holds rendered documents by generation-qualified key (local.go).
	local *localDocs
	// gens batches the generation reads of concurrent fetches (genbatch.go).
	gens *genBatcher
	// heads is each scope's newest committed change (changes.go).
	heads    *heads
	stopPoll context.CancelFunc

	lastWarn  atomic.Int64 // unix nanos of the last Redis warning
	downUntil atomic.Int64 // unix nanos until which Redis is not tried
}

// Close stops the service's background reader.
func (s *Service) Close() {
	s.stopPoll()
	s.gens.close()
}

// New builds the service over an open store and Redis client; Close it
// when done.
func New(st *models.Store, rdb redis.UniversalClient, cfg Config, log *slog.Logger) *Service {
	if cfg.TTL <= 0 {
		cfg.TTL = 10 * time.Minute
	}
	if log == nil {
		log = slog.Default()
	}
	pollCtx, stopPoll := context.WithCancel(context.Background())
	s := &Service{
		st:  st,
		rdb: rdb,
		cfg: cfg,
		opts: dialplan.Options{
			Domain:          cfg.Domain,
			SoundsDir:       cfg.SoundsDir,
			DefaultTimezone: cfg.DefaultTimezone,
		},
		log:   log,
		now:   time.Now,
		local:    newLocalDocs(64 << 20),
		gens:     newGenBatcher(rdb),
		heads:    newHeads(),
		stopPoll: stopPoll,
	}
	if st != nil {
		go s.pollHeads(pollCtx)
	}
	return s
}

// genKey holds a tenant's (or the platform's) configuration generation:
// the outbox id of the last change applied to it (changes.go).
func genKey(tenant string) string {
	if tenant == "" {
		return "sb:cgen:_platform"
	}
	return "sb:cgen:" + strings.ToLower(tenant)
}

// warnRedis logs a Redis failure at most once per 10 seconds: during an
// outage every fetch would otherwise log.
func (s *Service) warnRedis(msg string, err error) {
	now := time.Now().UnixNano()
	// Skip Redis for a moment: during an outage each try would cost the
	// client's dial timeout and retries on the FreeSWITCH hot path.
	s.downUntil.Store(now + int64(time.Second))
	last := s.lastWarn.Load()
	if now-last < int64(10*time.Second) || !s.lastWarn.CompareAndSwap(last, now) {
		return
	}
	s.log.Warn(msg+"; serving from the database", "error", err)
}

// redisUp reports whether the cache should be tried now.
func (s *Service) redisUp() bool { return time.Now().UnixNano() >= s.downUntil.Load() }
