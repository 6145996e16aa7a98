package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/callcenter"
	"github.com/switchboard/switchboard/internal/freeswitch/calls"
	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/freeswitch/features"
	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/freeswitch/gateways"
	"github.com/switchboard/switchboard/internal/freeswitch/gateways/gwstate"
	"github.com/switchboard/switchboard/internal/freeswitch/mwi"
	"github.com/switchboard/switchboard/internal/freeswitch/nodehealth"
	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/keyprefix"
	"github.com/switchboard/switchboard/internal/web/captcha"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// cdrRetryEvery is how often queued CDRs (the database was down when the
// call ended) are handed to the database again.
const cdrRetryEvery = 30 * time.Second

// newCallServices wires live calls: the FreeSWITCH node pool (events
// leased to one replica per node through Redis), the channel tracker fed by
// it, CDRs into the database, the telephony routes, and xml_flush_cache on
// directory changes.
func newCallServices(ctx context.Context, s *services, cfg Config, st *models.Store, rdb redis.UniversalClient, log *slog.Logger) error {
	nodes, err := eslNodes(ctx, cfg, st, log, false)
	if err != nil {
		return err
	}
	captchaVerifier, err := captcha.New(cfg.CaptchaVerifyURL, cfg.CaptchaSecret, nil)
	if err != nil {
		return err
	}
	replica := replicaID()
	tenants := newTenantCache(st, time.Minute)
	// A created (or renamed) tenant is no longer "not a tenant": on this
	// replica before the write is answered (newTenantCache), on the others
	// once the change is delivered, or within the negative TTL on replicas
	// that do not run the dispatcher.
	s.subscribers = append(s.subscribers, changes.Func{ID: "calls-tenant-cache", Fn: func(_ context.Context, c changes.Change) error {
		if c.Resource == "tenants" {
			tenants.forget(c.Key)
		}
		return nil
	}})
	tracker := calls.NewTracker(rdb, calls.Options{
		Prefix:       s.keyPrefix,
		TenantExists: tenants.exists,
		OnEnd: func(ctx context.Context, c calls.CDR) error {
			return st.InsertCDR(ctx, modelCDR(c))
		},
		OnCallEvent: func(ctx context.Context, ev calls.CallEvent) error {
			return st.InsertCallEvent(ctx, ev.Type, modelCallEvent(ev.Channel))
		},
		Spool:  callSpool{st},
		Logger: log.With("component", "calls"),
	})
	s.xml.SetRinging(ringingAt(tracker))
	adoptLegacyCDRs(ctx, tracker, log)
	lease := esl.NewRedisLease(rdb, s.keyPrefix, replica, 0)
	events := make(chan esl.Event, 8192)
	// Feature codes (star codes) arrive as CUSTOM events and become store
	// writes, applied one at a time off the event reader.
	featureEvents := make(chan esl.Event, 256)
	applier := features.New(st, rdb, log.With("component", "features"))
	applier.KeyPrefix = s.keyPrefix
	applier.MediaDir = cfg.Media.Dir // *732 recordings, written by the nodes into the library
	// Special mailboxes' message-waiting reports, forwarded to their
	// notify extensions off the event reader.
	mwiEvents := make(chan esl.Event, 256)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	// Event streams end with the services, or earlier when a graceful
	// shutdown ends them before the listener closes.
	streamsCtx, endStreams := context.WithCancel(runCtx)
	stopAfter := context.AfterFunc(cfg.Lifecycle.Streams(), endStreams)
	var pool *esl.Pool
	var ccSync *callcenter.Sync
	var gwSync *gateways.Sync
	health := nodehealth.New(st, cfg.ServerDownAfter, log.With("component", "nodehealth"))
	gwLive := gwstate.New(rdb, s.keyPrefix)
	router := &eventRouter{
		ctx: runCtx, log: log, metrics: s.metrics, tracker: tracker, health: health,
		calls: events, features: featureEvents, mailboxes: mwiEvents, gateways: gwLive,
		askGateway: func(ctx context.Context, node, gateway string) (string, error) {
			cmd, err := command.GatewayStatusOf(gateway)
			if err != nil {
				return "", err
			}
			return pool.API(ctx, node, cmd)
		},
	}
	pool = esl.NewPool(nodes, esl.PoolOptions{
		Logger:     log.With("component", "esl"),
		EventLease: lease,
		OnNodeState: func(ctx context.Context, node string, up bool, cause error) {
			health.Observe(ctx, node, up, cause)
			if !up {
				// What the node's gateways do while it is away is unknown.
				if err := gwLive.NodeDown(ctx, node); err != nil {
					log.Warn("gateway state of a lost node", "node", node, "error", err)
				}
			}
		},
		OnEvent: router.route,
		OnConnect: func(ctx context.Context, node string) {
			resync(ctx, pool, tracker, node, log)
			gatewaySnapshot(ctx, pool, gwLive, node, log)
			// Queue, agent and tier changes made while the node was away
			// never reached it: settle mod_callcenter off the event path.
			go func() {
				cctx, ccancel := context.WithTimeout(runCtx, 2*time.Minute)
				defer ccancel()
				if err := ccSync.Resync(cctx, node); err != nil {
					log.Warn("callcenter resync", "node", node, "error", err)
					return
				}
				log.Info("callcenter resync done", "node", node)
			}()
			// So did trunk changes: settle the node's sofia gateways.
			go func() {
				gctx, gcancel := context.WithTimeout(runCtx, time.Minute)
				defer gcancel()
				if err := gwSync.Resync(gctx, node); err != nil {
					log.Warn("gateways resync", "node", node, "error", err)
				}
			}()
		},
	})
	ccSync = callcenter.NewSync(pool, st, cfg.SIPDomain, log.With("component", "callcenter"))
	gwSync = gateways.New(pool, log.With("component", "gateways")).WithResync(
		func(ctx context.Context, node string) (map[string]string, error) {
			conf, err := s.xml.SofiaConf(ctx, node)
			if err != nil {
				return nil, err
			}
			return gateways.Fingerprints(conf, gateways.Profile)
		}, st.GatewayLedger())
	// Servers written through the API connect or drop nodes when the change
	// is delivered; every replica also re-reads them periodically.
	reload := make(chan struct{}, 1)
	s.subscribers = append(s.subscribers, changes.Func{ID: "esl-nodes", Fn: func(_ context.Context, c changes.Change) error {
		if c.Resource == "servers" {
			select {
			case reload <- struct{}{}:
			default:
			}
		}
		return nil
	}})
	var wg sync.WaitGroup
	wg.Add(6)
	go func() { defer wg.Done(); applier.Run(runCtx, featureEvents) }()
	go func() {
		defer wg.Done()
		mwi.New(st, pool, cfg.SIPDomain, func() []string { return esl.UpNodes(pool) }, log.With("component", "mwi")).Run(runCtx, mwiEvents)
	}()
	go func() {
		defer wg.Done()
		reconcileNodes(runCtx, pool, cfg, st, reload, log, func(ctx context.Context, node string) {
			// A node that left says nothing more of its gateways.
			if err := gwLive.Forget(ctx, node); err != nil {
				log.Warn("gateway state of a removed node", "node", node, "error", err)
			}
		})
	}()
	go func() { defer wg.Done(); _ = pool.Run(runCtx) }()
	go func() { defer wg.Done(); tracker.Consume(runCtx, measureLag(runCtx, events, s.metrics)) }()
	go func() { defer wg.Done(); retryCDRs(runCtx, st, tracker, log) }()
	s.stops = append(s.stops, func() { stopAfter(); endStreams(); cancel(); wg.Wait(); health.Stop() })
	log.Info("live calls wired", "nodes", len(nodes), "replica", replica)
	registerPoolMetrics(s.metrics, pool, events, log)

	s.subscribers = append(s.subscribers, &media.VoicemailDelivery{Nodes: pool, Domain: cfg.SIPDomain, NodeDir: cfg.Media.NodeDir})
	s.subscribers = append(s.subscribers, directoryFlusher(pool, cfg.SIPDomain), streamReloader(pool), ccSync, gwSync)
	s.web.Calls = &routes.CallDeps{
		Store:           st,
		Redis:           rdb,
		KeyPrefix:       s.keyPrefix,
		Control:         calls.NewControl(pool, tracker),
		Tracker:         tracker,
		Recordings:      cfg.Recordings,
		RecordingsMount: cfg.RecordingsMount,
		BaseURL:         cfg.BaseURL,
		Streams:         streamsCtx,
		UserVars:        s.xml.UserVariables,
		StreamsPerKey:   cfg.StreamsPerKey,
		Captcha:         captchaVerifier,
		SIPDomain:       cfg.SIPDomain,
		SIPWSURL:        cfg.SIPWSURL,
		LeaseHolder:     lease.Holder,
		Metrics:         s.metrics,
	}
	return nil
}

// eslNodes merges SWITCHBOARD_ESL_NODES with the enabled servers resource.
// A node named twice keeps its environment entry. Servers that cannot be
// read (database trouble at start) are logged, not fatal: the API serves
// configuration without FreeSWITCH.
// With strict set (reloads while running) unreadable servers are an error
// instead, so a database outage never drops connected nodes.
func eslNodes(ctx context.Context, cfg Config, st *models.Store, log *slog.Logger, strict bool) ([]esl.NodeConfig, error) {
	nodes, err := esl.ParseNodes(cfg.ESLNodes, cfg.ESLPassword)
	if err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_ESL_NODES: %w", err)
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		seen[n.Name] = true
	}
	res := st.Registry().Resource("servers")
	if res == nil {
		return nodes, nil
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	recs, err := st.Records(qctx, res, models.Owner{}, nil)
	if err != nil {
		if strict {
			return nil, fmt.Errorf("read servers: %w", err)
		}
		log.Warn("servers not read; using SWITCHBOARD_ESL_NODES only", "error", err)
		return nodes, nil
	}
	for _, r := range recs {
		if on, _ := r["enabled"].(bool); !on {
			continue
		}
		name, _ := r["name"].(string)
		host, _ := r["esl_host"].(string)
		if name == "" || host == "" || seen[name] {
			continue
		}
		pw, _ := r["esl_password"].(string)
		if pw == "" {
			pw = cfg.ESLPassword
		}
		port := 8021
		if p, err := strconv.Atoi(fmt.Sprint(r["esl_port"])); err == nil && p > 0 {
			port = p
		}
		seen[name] = true
		nodes = append(nodes, esl.NodeConfig{Name: name, Addr: hostPort(host, port), Password: pw})
	}
	return nodes, nil
}

func hostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// nodesReloadEvery is how often every replica re-reads the servers
// resource, to follow changes made through other replicas.
const nodesReloadEvery = 15 * time.Second

// reconcileNodes keeps the pool's nodes equal to SWITCHBOARD_ESL_NODES plus
// the enabled servers, on a tick and whenever a platform resource changed;
// removed hears each node that left.
func reconcileNodes(ctx context.Context, pool *esl.Pool, cfg Config, st *models.Store, reload <-chan struct{}, log *slog.Logger, removed func(ctx context.Context, node string)) {
	tick := time.NewTicker(nodesReloadEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-reload:
		}
		nodes, err := eslNodes(ctx, cfg, st, log, true)
		if err != nil {
			log.Warn("esl nodes not reloaded", "error", err)
			continue
		}
		before := pool.Nodes()
		if added, gone := pool.SetNodes(nodes); added+gone > 0 {
			log.Info("esl nodes changed", "added", added, "removed", gone, "nodes", len(nodes))
			for _, n := range before {
				if !slices.ContainsFunc(nodes, func(c esl.NodeConfig) bool { return c.Name == n.Name }) {
					removed(ctx, n.Name)
				}
			}
		}
	}
}

// replicaID names this process in event leases: unique per running replica.
func replicaID() string {
	host, _ := os.Hostname()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}

// resync rebuilds a node's live channels from its channel list after each
// (re)connect of its event stream. It is bounded: the pool holds the
// node's events back until it returns.
func resync(ctx context.Context, pool *esl.Pool, tracker *calls.Tracker, node string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// The Core-UUID first: channels of an earlier FreeSWITCH process on
	// this node are gone whatever their age.
	core, err := pool.API(ctx, node, command.CoreUUID())
	if err != nil {
		log.Warn("core uuid unknown; resync cannot tell a restart", "node", node, "error", err)
		core = ""
	}
	body, err := pool.API(ctx, node, command.ShowChannels())
	if err == nil {
		err = tracker.ResyncCore(ctx, node, strings.TrimSpace(core), body)
	}
	if err != nil {
		log.Warn("channel resync failed", "node", node, "error", err)
		return
	}
	log.Info("channels resynced", "node", node)
}

// gatewaySnapshot reads every gateway's state from a node after each
// (re)connect of its event stream, before its events flow, so the live
// gateway state is not blind to what changed while nobody listened.
func gatewaySnapshot(ctx context.Context, pool *esl.Pool, store *gwstate.Store, node string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	reply, err := pool.API(ctx, node, command.GatewayStatus())
	if err == nil {
		err = store.Snapshot(ctx, node, reply)
	}
	if err != nil {
		log.Warn("gateway state not read", "node", node, "error", err)
	}
}

func retryCDRs(ctx context.Context, st *models.Store, tracker *calls.Tracker, log *slog.Logger) {
	every(ctx, cdrRetryEvery, func() {
		tctx, tcancel := context.WithTimeout(ctx, 10*time.Second)
		if err := tracker.TrimStream(tctx); err != nil {
			log.Warn("trim change stream", "error", err)
		}
		tcancel()
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if _, err := st.PruneCallEvents(rctx, 24*time.Hour); err != nil {
			log.Warn("prune call events", "error", err)
		}
		// Events a replica held through a Redis outage and did not apply
		// (it died): applied here, before the CDRs they queue are retried.
		if _, err := tracker.ReplayHeld(rctx, heldReplayAfter); err != nil {
			log.Warn("apply held channel events", "error", err)
		}
		n, err := tracker.RetryPendingCDRs(rctx)
		if err != nil {
			log.Warn("cdr retry", "error", err, "delivered", n)
		} else if n > 0 {
			log.Info("queued cdrs delivered", "count", n)
		}
	})
}

// heldReplayAfter is how long events stay in the spool before any replica
// applies them: their own replica retries within seconds while it lives.
const heldReplayAfter = 30 * time.Second

// callSpool keeps the tracker's held events in the database.
type callSpool struct{ st *models.Store }

func (c callSpool) Hold(ctx context.Context, events []byte) (int64, error) {
	return c.st.HoldCallEvents(ctx, events)
}

func (c callSpool) HeldBefore(ctx context.Context, t time.Time, limit int) ([]calls.HeldBatch, error) {
	held, err := c.st.HeldCallEventsBefore(ctx, t, limit)
	out := make([]calls.HeldBatch, len(held))
	for i, h := range held {
		out[i] = calls.HeldBatch{ID: h.ID, Events: h.Events, At: h.At}
	}
	return out, err
}

func (c callSpool) Release(ctx context.Context, id int64) error {
	return c.st.ReleaseCallEvents(ctx, id)
}

// every runs fn every d until ctx ends.
func every(ctx context.Context, d time.Duration, fn func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fn()
		}
	}
}

// directoryFlusher is the outbox subscriber that keeps FreeSWITCH's own
// user cache true: after a change that reaches the directory it sends every
// connected node xml_flush_cache for the users concerned (the whole cache
// only when a tenant-wide object changed). A node that refuses is retried by
// the dispatcher; a node that is down has nothing to send to.
func directoryFlusher(pool *esl.Pool, domain string) changes.Subscriber {
	return changes.Func{ID: "freeswitch-directory-flush", Fn: func(ctx context.Context, c changes.Change) error {
		users, all := fsxml.DirectoryUsers(c)
		var cmds []command.Command
		switch {
		case all:
			cmds = []command.Command{command.FlushDirectory()}
		default:
			for _, u := range users {
				cmd, err := command.FlushUser(u, domain)
				if err != nil {
					return fmt.Errorf("flush %s: %w", u, err)
				}
				cmds = append(cmds, cmd)
			}
		}
		return broadcast(ctx, pool, cmds)
	}}
}

// streamReloader is the outbox subscriber that applies music-on-hold
// changes on every connected node with mod_local_stream's commands
// (media.StreamCommands); a refusal is retried by the dispatcher.
func streamReloader(pool *esl.Pool) changes.Subscriber {
	return changes.Func{ID: "freeswitch-local-stream", Fn: func(ctx context.Context, c changes.Change) error {
		return broadcast(ctx, pool, media.StreamCommands(c))
	}}
}

// broadcast sends each API command to every connected node; a node that is
// down has nothing to apply (it reads the configuration when it comes up).
func broadcast(ctx context.Context, pool *esl.Pool, cmds []command.Command) error {
	if len(cmds) == 0 {
		return nil
	}
	var errs []error
	for _, n := range pool.Nodes() {
		if !n.Up {
			continue
		}
		for _, cmd := range cmds {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := pool.API(cctx, n.Name, cmd)
			cancel()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s on %s: %w", cmd, n.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

func modelCDR(c calls.CDR) models.CDR {
	out := models.CDR{
		Tenant: c.Tenant, ChannelID: c.ChannelID, UUID: c.UUID, Node: c.Node, Direction: c.Direction,
		CallerIDName: c.CallerIDName, CallerIDNumber: c.CallerIDNumber, Destination: c.Destination,
		Extension: c.Extension, StartedAt: c.StartedAt, EndedAt: c.EndedAt,
		DurationSeconds: c.DurationSeconds, Billsec: c.Billsec, HangupCause: c.HangupCause,
		RecordingPath: c.RecordingPath,
	}
	if !c.AnsweredAt.IsZero() {
		at := c.AnsweredAt
		out.AnsweredAt = &at
	}
	return out
}

// modelCallEvent is the data of call.started and call.answered.
func modelCallEvent(ch calls.Channel) models.CallLifecycle {
	out := models.CallLifecycle{
		ChannelID: ch.ID, UUID: ch.UUID, Node: ch.Node, CallUUID: ch.CallUUID, Tenant: ch.Tenant,
		Direction: ch.Direction, State: ch.State, CallerIDName: ch.CallerIDName, CallerIDNumber: ch.CallerIDNumber,
		Destination: ch.Destination, Extension: ch.Extension, StartedAt: ch.StartedAt,
	}
	if !ch.AnsweredAt.IsZero() {
		at := ch.AnsweredAt
		out.AnsweredAt = &at
	}
	return out
}

// tenantCache answers "is this context a tenant" for every channel event
// from memory, asking the database at most once per name and TTL.
type tenantCache struct {
	st     *models.Store
	ttl    time.Duration
	negTTL time.Duration
	mu     sync.Mutex
	m      map[string]tenantEntry
	// gen counts forgets: a database answer read before a forget is not
	// stored after it (it may predate the write the forget is about).
	gen uint64
}

type tenantEntry struct {
	ok  bool
	exp time.Time
}

// newTenantCache builds the cache and has this process's tenant writes
// forget their names right after the commit, before the write is
// answered: a call in a tenant's context just after the tenant was
// created through this replica is that tenant's (seen in CI: the call
// came before the change's delivery and was tenantless).
func newTenantCache(st *models.Store, ttl time.Duration) *tenantCache {
	c := &tenantCache{st: st, ttl: ttl, negTTL: min(ttl, negativeTenantTTL), m: map[string]tenantEntry{}}
	st.OnCommit(func(_ context.Context, chs []changes.Change) {
		for _, ch := range chs {
			if ch.Resource == "tenants" {
				c.forget(ch.Key)
			}
		}
	})
	return c
}

// negativeTenantTTL bounds how long "not a tenant" is believed: a tenant
// created through another replica is seen within it.
const negativeTenantTTL = 5 * time.Second

// forget drops what is cached about name (a tenant was created, renamed or
// deleted).
func (c *tenantCache) forget(name string) {
	if name == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, strings.ToLower(name))
}

func (c *tenantCache) exists(name string) bool {
	key := strings.ToLower(name)
	c.mu.Lock()
	e, hit := c.m[key]
	gen := c.gen
	c.mu.Unlock()
	if hit && time.Now().Before(e.exp) {
		return e.ok
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.st.Tenant(ctx, name)
	ok := err == nil
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return hit && e.ok // database trouble: keep the last answer
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return ok // a tenant write came in between: answer, remember nothing
	}
	if len(c.m) > 10000 {
		c.m = map[string]tenantEntry{}
	}
	ttl := c.ttl
	if !ok {
		ttl = c.negTTL
	}
	c.m[key] = tenantEntry{ok: ok, exp: time.Now().Add(ttl)}
	return ok
}

// ringingAt gives directed pickup renders the tracker's calls ringing at
// an extension of a tenant.
func ringingAt(tracker *calls.Tracker) fsxml.RingingLookup {
	return func(ctx context.Context, tenant, ext string) ([]dialplan.RingingCall, error) {
		chs, err := tracker.RingingAt(ctx, tenant, ext)
		if err != nil {
			return nil, fmt.Errorf("ringing calls at %s/%s: %w", tenant, ext, err)
		}
		out := make([]dialplan.RingingCall, len(chs))
		for i, ch := range chs {
			out[i] = dialplan.RingingCall{UUID: ch.UUID, CallUUID: ch.CallUUID, Node: ch.Node}
		}
		return out, nil
	}
}

// legacyCallsPrefix is where releases before the per-installation key
// prefix kept the call tracker's keys (shared by every installation on the
// Redis).
const legacyCallsPrefix = keyprefix.Default + "{calls}:"

// adoptLegacyCDRs takes over the CDRs and call events such a release left
// queued, so an upgrade loses none. Live channels need no carrying over:
// each node's state is read again from FreeSWITCH when its connection is
// made. A Redis that does not answer now is logged, not waited on.
func adoptLegacyCDRs(ctx context.Context, tracker *calls.Tracker, log *slog.Logger) {
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := tracker.AdoptPendingCDRs(actx, legacyCallsPrefix)
	if err != nil {
		log.Warn("CDRs queued by an earlier release were not taken over; they are tried again at the next start", "error", err)
		return
	}
	if n > 0 {
		log.Info("took over CDRs queued by an earlier release", "count", n)
	}
}
