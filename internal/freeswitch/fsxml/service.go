// Package fsxml serves the XML FreeSWITCH fetches through mod_xml_curl
// (POST /fs/xml): it authenticates the node and answers from in-process
// memory: a document rendered under the current per-tenant and platform
// configuration generations, else a render (package dialplan) of the typed
// configuration models valid under them, built from the store on first
// use. The generations are kept in process memory and moved by every
// committed change (gens.go, changes.go), so a write is visible on the
// very next fetch without deleting anything. It also answers the
// routing-trace API.
package fsxml

import (
	"context"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/keyprefix"
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
	// ModelBytes bounds the tenant models held in memory, counted as what
	// they hold: the extensions packed (dialplan's packed.go), the other
	// rows' structs, strings and what their JSON columns decoded to
	// (scan.go; default 96 MiB; the application gives 31/32 of
	// SWITCHBOARD_XML_CACHE_MAX_BYTES); least recently used tenants go
	// first.
	ModelBytes int
	// SnapshotPath, when set, is the file the tenant models are kept in
	// across a restart (snapshot.go): written when the service closes,
	// restored by the next start of the same binary.
	SnapshotPath string
	// Preload reads every tenant's model in the background once memory
	// can be trusted after the service starts, and again after a reset
	// (preload.go), instead of one tenant at a time on first use.
	Preload bool
	// DocBytes bounds the rendered documents held in memory (default 8
	// MiB; the application gives 1/32 of SWITCHBOARD_XML_CACHE_MAX_BYTES):
	// a hit saves one render, some tens of microseconds, so the documents
	// asked for again and again are worth keeping, not every one rendered.
	DocBytes int
	// DefaultTimezone applies when neither schedule nor tenant names a zone.
	DefaultTimezone string
	// SoundsDir is where tenant prompt files live on the nodes.
	SoundsDir string
	// MediaDir is the media library as the nodes mount it: music-on-hold
	// classes are the local_stream.conf directories <MediaDir>/<tenant>/moh/<name>.
	MediaDir string
	// MOHDefaultDir holds the platform's default hold music as the nodes
	// see it (<dir>/8000, <dir>/16000): the local_stream.conf stream "moh".
	MOHDefaultDir string
	// SIPWSPort is the SIP-over-WebSocket port of internal profiles (0 = none).
	SIPWSPort int
	// SIPWSSPort is the secure SIP-over-WebSocket port of internal profiles (0 = none).
	SIPWSSPort int
	// MediaURL is /fs/media as the nodes reach it (prompts and chimes are
	// rendered as signed http_cache:// URLs under it); "" renders paths
	// under SoundsDir. MediaKey signs them.
	MediaURL string
	MediaKey []byte

	// modelExtensions, when positive, replaces defaultModelExtensions
	// (tests: a small tenant counts as large). It is a setting rather
	// than a field tests write because the preload reads it from its own
	// goroutine as soon as New returns.
	modelExtensions int
	// buildHook, when set (tests only), becomes Service.buildHook.
	buildHook func(ctx context.Context, tenant string)
	// preloadHook, when set (tests only), runs when a preload starts to
	// read the platform model, right after the tenant list.
	preloadHook func(ctx context.Context)
}

// Service renders and caches FreeSWITCH XML. It is safe for concurrent use.
type Service struct {
	st   *models.Store
	rdb  redis.UniversalClient
	cfg  Config
	opts dialplan.Options
	log  *slog.Logger
	// ringing reads live calls for directed pickup (SetRinging).
	ringing RingingLookup
	// now is the clock; tests may replace it before serving.
	now func() time.Time
	// unavailableLogged is the second (Unix) of the last warning that a
	// fetch was answered "not found" for want of the database: one a
	// second at most, however many fetches.
	unavailableLogged atomic.Int64

	// tables read the renderer's types straight from the database (scan.go).
	tables *tables
	// models holds the typed per-tenant and platform models (model.go).
	models *modelCache
	// modelExtensions is the most extensions a tenant model holds.
	modelExtensions int
	// buildSlots bounds the tenant model reads (a tenant's directory or
	// routing part) running at once: each is a round of queries, and
	// right after a restart every tenant's first fetch starts one.
	// Bounded, a build finishes sooner than among hundreds interleaved,
	// and a slow one (a tenant whose queries hang) holds one slot, never
	// the others: builds are per tenant, with no lock or barrier shared
	// between tenants.
	buildSlots chan struct{}
	// buildHook, when set (tests only), runs before a tenant's rows are
	// read for a model.
	buildHook func(ctx context.Context, tenant string)
	// local holds rendered documents by generation-qualified key (local.go).
	local *localDocs
	// gens are the configuration generations known here (gens.go).
	gens *scopeGens
	// note keeps the change notifications coming (changes.go); channel is
	// their Redis channel.
	note    notifier
	channel string
	// keyPrefix starts this installation's Redis keys (Store.KeyPrefix).
	keyPrefix string
	stopPoll  context.CancelFunc
	// started is when the service was made.
	started time.Time
	// life ends when the service closes (background work runs under it).
	life context.Context
	// preloading is set while a preload runs; preloadAgain asks it to
	// run once more (a reset arrived meanwhile); preloadStarted is set
	// once the first preload was asked for.
	preloading, preloadAgain, preloadStarted atomic.Bool
	preloader                                preloader
	// preloadSlots bound the preload's queries running at once (half the
	// pool, one more for the batches fetches wait for).
	preloadSlots *preloadSlots
	// restoring, while saved models are being restored (snapshot.go),
	// holds the fetches of tenants whose model is among them: they wait
	// for it rather than build.
	restoring atomic.Pointer[restoreWaits]
	// saved delivers the snapshot file being read (nil: none).
	saved chan *savedFile

	lastWarn  atomic.Int64 // unix nanos of the last Redis warning
	downUntil atomic.Int64 // unix nanos until which Redis is not tried
}

// Close stops the service's background readers and releases its prepared
// statements.
func (s *Service) Close() {
	s.stopPoll()
	if err := s.saveModels(); err != nil {
		s.log.Warn("xml models: not saved for the next start; it reads them from the database", "error", err)
	}
	if s.tables != nil {
		s.tables.close()
	}
}

// New builds the service over an open store and Redis client; Close it
// when done. It panics when the renderer's types do not fit the registry
// declarations (a renamed or missing field: a programming error that
// TestRendererContract catches first).
func New(st *models.Store, rdb redis.UniversalClient, cfg Config, log *slog.Logger) *Service {
	if cfg.ModelBytes <= 0 {
		cfg.ModelBytes = 96 << 20
	}
	if cfg.DocBytes <= 0 {
		cfg.DocBytes = 8 << 20
	}
	if log == nil {
		log = slog.Default()
	}
	if cfg.modelExtensions <= 0 {
		cfg.modelExtensions = defaultModelExtensions
	}
	var t *tables
	if st != nil {
		var err error
		if t, err = newTables(st.Registry(), st.Sealer()); err != nil {
			panic(err)
		}
	}
	pollCtx, stopPoll := context.WithCancel(context.Background())
	s := &Service{
		tables: t,
		models: newModelCache(cfg.ModelBytes),

		modelExtensions: cfg.modelExtensions,
		buildHook:       cfg.buildHook,
		buildSlots:      make(chan struct{}, buildParallelism(st)),
		preloadSlots:    newPreloadSlots(buildParallelism(st)),
		st:              st,
		rdb:             rdb,
		cfg:             cfg,
		opts: dialplan.Options{
			Domain:          cfg.Domain,
			SoundsDir:       cfg.SoundsDir,
			MediaDir:        cfg.MediaDir,
			DefaultTimezone: cfg.DefaultTimezone,
			SIPWSPort:       cfg.SIPWSPort,
			SIPWSSPort:      cfg.SIPWSSPort,
			Media:           dialplan.MediaURLs{Base: cfg.MediaURL, Key: cfg.MediaKey},
		},
		log:       log,
		now:       time.Now,
		local:     newLocalDocs(cfg.DocBytes),
		gens:      newScopeGens(),
		stopPoll:  stopPoll,
		life:      pollCtx,
		started:   time.Now(),
		keyPrefix: keyprefix.Default,
	}
	if st != nil && rdb != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		prefix, err := st.KeyPrefix(ctx)
		cancel()
		if err != nil {
			// The database answered the migrations a moment ago; should it
			// not answer now, keys of this process alone keep the replica
			// correct (other replicas' writes reach it through the outbox
			// poll; hunt groups' turns are kept per process) until a restart.
			log.Error("xml cache: no installation id; change notifications stay within this process", "error", err)
			prefix = keyprefix.For("process-" + newReplicaID())
		}
		s.keyPrefix = prefix
		s.channel = prefix + changesChannel
		s.note.id = newReplicaID()
		if _, err := os.Stat(cfg.SnapshotPath); cfg.SnapshotPath != "" && err == nil {
			// Decoded while the server starts; used once memory is trusted.
			waits := newRestoreWaits()
			s.restoring.Store(waits)
			s.saved = make(chan *savedFile, 1)
			go s.readSaved(cfg.SnapshotPath, waits, s.saved)
		}
		go s.pollLoop(pollCtx)
		go s.subscribe(pollCtx)
	}
	return s
}

// buildParallelism is how many tenant model reads run at once: on SQLite
// (in-process, CPU-bound, four connections, two queries per build) four
// builds keep the pool and the CPU busy; on MySQL, whose queries wait on the network,
// more overlap.
func buildParallelism(st *models.Store) int {
	if st != nil && st.Dialect().SQLite {
		return 4
	}
	return 8
}

// buildSlot takes one of the model-build slots and returns its release.
// A build is not cancelled with the fetch that started it (others may
// wait on it), so neither is the wait for a slot.
func (s *Service) buildSlot(ctx context.Context, tenant string) func() {
	s.buildSlots <- struct{}{}
	if s.buildHook != nil {
		s.buildHook(ctx, tenant)
	}
	return func() { <-s.buildSlots }
}

// warnRedis logs a Redis failure at most once per 10 seconds: during an
// outage every fetch would otherwise log.
func (s *Service) warnRedis(msg string, err error) {
	now := time.Now().UnixNano()
	// Skip Redis for a moment: during an outage each try would cost the
	// client's dial timeout and retries on the FreeSWITCH hot path.
	s.downUntil.Store(now + int64(redisSkip))
	last := s.lastWarn.Load()
	if now-last < int64(10*time.Second) || !s.lastWarn.CompareAndSwap(last, now) {
		return
	}
	s.log.Warn(msg+"; serving from the database", "error", err)
}

// redisSkip is how long Redis is not tried after an error.
const redisSkip = time.Second

// redisUp reports whether Redis should be tried now.
func (s *Service) redisUp() bool { return time.Now().UnixNano() >= s.downUntil.Load() }
