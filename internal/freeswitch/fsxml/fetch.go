package fsxml

import (
	"context"
	"errors"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/crm"
	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/freeswitch/gateways/sofiaconf"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
	"github.com/switchboard/switchboard/internal/models"
)

// Fetch answers one mod_xml_curl POST body with the XML document to send
// back. The configuration generations are read from process memory
// (gens.go); a document rendered under them is served from memory, else
// it is rendered from the in-memory models valid under them (built from
// the database on first use). While change notifications are not
// confirmed (changes.go) the render reads the database directly and
// nothing is cached. An error means the database failed; FreeSWITCH then
// falls back to its own files.
//
// While the database is unavailable a fetch is answered from memory when
// the models prove it current (a tenant whose only changes since its model
// are writes to some extensions is served without those extensions), and
// with FreeSWITCH's "not found" document otherwise, quickly and never as
// an HTTP error: FreeSWITCH then refuses that one registration or call
// instead of every fetch failing.
func (s *Service) Fetch(ctx context.Context, body []byte) ([]byte, error) {
	doc, err := s.fetch(ctx, body)
	if err != nil && errors.Is(err, models.ErrUnavailable) {
		stats.unavailable.Add(1)
		if now := time.Now().Unix(); s.unavailableLogged.Swap(now) != now {
			s.log.Warn("xml fetch answered not found: the database is unavailable", "error", err)
		}
		return xmldoc.NotFound(), nil
	}
	return doc, err
}

func (s *Service) fetch(ctx context.Context, body []byte) ([]byte, error) {
	stats.fetches.Add(1)
	rec := recorder(ctx)
	// The body outlives no part of this call, so it need not be copied.
	req := xmlcurl.ParseRequestShared(body)
	rec.setSection(req.Section)
	now := s.now()
	if req.Section == "configuration" {
		// Fixed documents and local_stream.conf (every tenant's classes):
		// fetched at module load and on reloads only, never cached.
		switch req.KeyValue {
		case "local_stream.conf":
			rec.setTier(TierRender)
			return s.localStreamConf(ctx)
		case "voicemail.conf":
			rec.setTier(TierRender)
			return s.voicemailConf(ctx)
		case "directory.conf":
			rec.setTier(TierRender)
			return dialplan.DirectoryConf(), nil
		}
	}
	if doc, ok, err := s.widgetFetch(ctx, &req, now); ok {
		rec.setTier(TierRender)
		return doc, err
	}
	l, ok := lookupFor(&req, now)
	if !ok {
		rec.setTier(TierNone)
		return xmldoc.NotFound(), nil
	}
	if !s.note.live.Load() || l.everyTenant {
		// Changes may be missed (or, across every tenant, not keyed by one
		// generation): nothing cached can be trusted.
		rec.setTier(TierRender)
		r, err := s.render(ctx, &req, l, &source{s: s, fresh: true}, now)
		return r.doc, err
	}
	g, err := s.fetchGens(ctx, l)
	if err != nil {
		return nil, err
	}
	var buf [256]byte
	base := g.appendKey(buf[:0], l)
	if doc := s.local.get(base, l); doc != nil {
		stats.docHits.Add(1)
		rec.setTier(TierMemory)
		return doc, nil
	}
	rec.setTier(TierRender)
	src := &source{s: s, g: g}
	r, err := s.render(ctx, &req, l, src, now)
	if err != nil {
		return nil, err
	}
	if !src.fresh && !src.degraded && !strings.Contains(r.flags, "l") {
		s.local.put(base, r.flags, l, r.doc)
	}
	return r.doc, nil
}

// fetchGens returns the generations a fetch's answer is keyed by. For the
// public context that is the generation of the DID's tenant: the DID's
// tenant is remembered per platform generation.
func (s *Service) fetchGens(ctx context.Context, l lookup) (gens, error) {
	if l.did == "" {
		return s.gens.current(l.tenant), nil
	}
	g := s.gens.current("")
	if m, ok := s.local.did(l.did); ok && m.epoch == g.epoch && m.pgen == g.pgen {
		return s.gens.current(m.tenant), nil
	}
	p, err := s.platformModel(ctx, g)
	if err != nil {
		return g, err
	}
	d, err := s.did(ctx, p, l.did)
	if err != nil || d == nil || d.Tenant == "" {
		return g, err
	}
	g2 := s.gens.current(d.Tenant)
	if g2.epoch == g.epoch && g2.pgen == g.pgen {
		s.local.putDID(l.did, didEntry{epoch: g2.epoch, pgen: g2.pgen, tenant: g2.tenant})
	}
	return g2, nil
}

// source gives a render its models: from the cache under the fetch's
// generations, or freshly built from the database (Redis unavailable, the
// routing trace, or a DID whose tenant changed under a fetch). A render
// that used a fresh model is not cached.
type source struct {
	s     *Service
	g     gens
	fresh bool
	// degraded is set when a model was served without the database (see
	// degradedModel): the answer is right now but not to be kept.
	degraded bool
}

func (src *source) tenant(ctx context.Context, name string) (*tenantModel, error) {
	if src.fresh || !strings.EqualFold(name, src.g.tenant) {
		// The generation read is another tenant's: never key this one by it.
		src.fresh = true
		return src.s.buildTenant(ctx, name)
	}
	m, err := src.s.tenantModel(ctx, name, src.g)
	if m != nil && m.degraded {
		src.degraded = true
	}
	return m, err
}

func (src *source) platform(ctx context.Context) (*platformModel, error) {
	if src.fresh {
		return src.s.buildPlatform(ctx)
	}
	return src.s.platformModel(ctx, src.g)
}

// lookupFor derives the cache key from the request: the tenant whose
// generation applies and every request field the render reads. ok is false
// for requests that are answered NotFound without looking at anything.
func lookupFor(req *xmlcurl.Request, now time.Time) (lookup, bool) {
	l := lookup{minute: strconv.FormatInt(now.Unix()/60, 10)}
	switch req.Section {
	case "directory":
		group := req.Group
		if req.Action == "group_call" {
			if group == "" {
				group = req.Get("group_name")
			}
			l.tenant = strings.ToLower(group)
		} else if _, tenant, ok := naming.SplitUserID(req.User); ok {
			l.tenant = strings.ToLower(tenant)
		} else if tenant, ok := naming.DirectoryDomainTenant(fetchDomain(req)); ok && req.User == "" {
			// mod_directory reading a tenant's dial-by-name names.
			l.tenant = strings.ToLower(tenant)
		}
		l.key = keyPart(strings.Join([]string{"d", req.Action, req.User, req.Domain, req.KeyValue, req.Key, group}, "|"))
	case "dialplan":
		dest := req.DestinationNumber()
		// Everything a render may read about the caller; used only for
		// renders that did read it (Trace.CallerDependent).
		l.caller = keyPart(strings.Join([]string{req.CallerNumber(), req.CallerName(), req.Ext, req.Tenant, req.ForwardChain()}, "|"))
		if req.Context() == "public" {
			l.did = strings.TrimPrefix(dest, "+")
			l.key = keyPart("p|" + dest)
		} else {
			l.tenant = strings.ToLower(req.Context())
			l.key = keyPart("x|" + req.Context() + "|" + dest)
		}
	case "configuration":
		switch req.KeyValue {
		case "sofia.conf":
			l.key = keyPart(strings.Join([]string{"c", req.KeyValue, req.Hostname, req.IPv4, req.Profile}, "|"))
		case "conference.conf":
			// One room's profile, keyed by its tenant's generation.
			name := req.ConferenceProfile()
			if tenant, _, ok := naming.SplitTenantObjectName(name); ok {
				l.tenant = strings.ToLower(tenant)
			}
			l.key = keyPart(strings.Join([]string{"c", req.KeyValue, name, req.Get("Action")}, "|"))
		case "callcenter.conf":
			// One queue, keyed by its tenant's generation; at module load
			// (no CC-Queue) every tenant's queues, agents and tiers, which
			// no one generation covers: rendered from the database.
			name := req.CallcenterQueue()
			if name == "" {
				l.everyTenant = true
			} else if _, tenant, ok := naming.SplitCallcenterName(name); ok {
				l.tenant = strings.ToLower(tenant)
			}
			l.key = keyPart("c|callcenter.conf|" + name)
		case "ivr.conf":
			// One menu, keyed by its tenant's generation.
			name := req.Get("Menu-Name")
			if tenant, _, ok := naming.SplitTenantObjectName(name); ok {
				l.tenant = strings.ToLower(tenant)
			}
			l.key = keyPart("c|ivr.conf|" + name)
		default:
			return l, false
		}
	default:
		return l, false
	}
	return l, true
}

// fetchDomain is the domain a directory fetch asks for, as
// dialplan.Directory reads it.
func fetchDomain(req *xmlcurl.Request) string {
	if req.Domain != "" {
		return req.Domain
	}
	return req.KeyValue
}

// rendered is a render and what its answer depends on beyond its key.
type rendered struct {
	doc   []byte
	flags string // "t" time, "c" caller, "l" live state (never cached)
}

func (s *Service) render(ctx context.Context, req *xmlcurl.Request, l lookup, src *source, now time.Time) (rendered, error) {
	stats.renders.Add(1)
	switch req.Section {
	case "directory":
		ext, tenant, _ := naming.SplitUserID(req.User)
		group := req.Action == "group_call"
		_, names := naming.DirectoryDomainTenant(fetchDomain(req))
		names = names && req.User == ""
		if group || names {
			tenant = l.tenant
		}
		var snap *dialplan.TenantSnapshot
		if tenant != "" {
			m, err := src.tenant(ctx, tenant)
			if err != nil {
				return rendered{}, err
			}
			var exts []string // nil: every extension (group_call, dial-by-name)
			if !group && !names {
				exts = []string{ext}
			}
			// Dial-by-name reads the directory settings (routing part).
			if snap, err = s.snapshot(ctx, m, nil, names, exts...); err != nil {
				return rendered{}, err
			}
		}
		return rendered{doc: dialplan.Directory(s.opts, *req, snap)}, nil
	case "configuration":
		if req.KeyValue == "callcenter.conf" {
			return s.renderCallcenter(ctx, req, l, src)
		}
		if req.KeyValue == "conference.conf" || req.KeyValue == "ivr.conf" {
			return s.renderTenantConf(ctx, req, l, src, now)
		}
		p, err := src.platform(ctx)
		if err != nil {
			return rendered{}, err
		}
		return rendered{doc: sofiaconf.Configuration(s.opts, *req, p.servers, p.trunks)}, nil
	}
	p, err := src.platform(ctx)
	if err != nil {
		return rendered{}, err
	}
	if req.Context() == "public" {
		pub, err := s.publicSnapshot(ctx, src, p, l.did, req.CallerNumber())
		if err != nil {
			return rendered{}, err
		}
		doc, tr := dialplan.Dialplan(s.opts, *req, pub, nil, now)
		return rendered{doc: doc, flags: flagsOf(tr)}, nil
	}
	m, err := src.tenant(ctx, req.Context())
	if err != nil {
		return rendered{}, err
	}
	dest := req.DestinationNumber()
	snap, err := s.snapshot(ctx, m, p, true, dest, dialplan.DestinationExtension(dest), req.Ext)
	if err != nil {
		return rendered{}, err
	}
	if ext, ok := dialplan.DirectedPickupTarget(snap, dest); ok {
		snap = s.withRinging(ctx, snap, ext)
	}
	snap = s.withHuntTurn(ctx, snap, dest, true)
	doc, tr := dialplan.Dialplan(s.opts, *req, nil, snap, now)
	return rendered{doc: doc, flags: flagsOf(tr)}, nil
}

// huntTurnTTL is how long a round-robin group's counter outlives its last
// call (renewed by each call).
const huntTurnTTL = 90 * 24 * time.Hour

// huntTurnKey is the Redis counter of calls to a round-robin hunt group.
func (s *Service) huntTurnKey(tenant string, group int64) string {
	return s.keyPrefix + "hunt:rr:" + tenant + ":" + strconv.FormatInt(group, 10)
}

// withHuntTurn gives a call to a random or round-robin hunt group its
// turn (dialplan.WithHuntTurn): a random number, or the group's call
// counter in Redis, shared by every replica and node, advanced by each
// call (call false: read only, for the routing trace, which shows the
// next call's order). Without Redis a round-robin call starts at a random
// member: spread, if not in turn. Other numbers are left as they are.
func (s *Service) withHuntTurn(ctx context.Context, snap *dialplan.TenantSnapshot, number string, call bool) *dialplan.TenantSnapshot {
	id, strategy, ok := dialplan.HuntTurnGroup(snap, number)
	if !ok {
		return snap
	}
	n := mrand.Uint64()
	if strategy == "round_robin" && s.rdb != nil && s.redisUp() {
		key := s.huntTurnKey(snap.Tenant.Tenant, id)
		var err error
		if call {
			var incr *redis.IntCmd
			_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				incr = p.Incr(ctx, key)
				p.Expire(ctx, key, huntTurnTTL)
				return nil
			})
			if err == nil {
				n = uint64(incr.Val() - 1)
			}
		} else {
			var v int64
			v, err = s.rdb.Get(ctx, key).Int64()
			if errors.Is(err, redis.Nil) {
				v, err = 0, nil
			}
			if err == nil {
				n = uint64(v)
			}
		}
		if err != nil {
			s.warnRedis("round-robin hunt group counter unavailable", err)
		}
	}
	return snap.WithHuntTurn(id, n)
}

// RingingLookup returns the calls ringing at a tenant's extension now:
// the live-call tracker's channels of that tenant only.
type RingingLookup func(ctx context.Context, tenant, ext string) ([]dialplan.RingingCall, error)

// SetRinging gives directed pickup renders the live-call state (none set:
// every directed pickup is refused as "no call ringing").
func (s *Service) SetRinging(fn RingingLookup) { s.ringing = fn }

// withRinging attaches the calls ringing at ext to a copy of snap. A lookup
// that fails leaves none: the pickup is refused, the fetch still answers.
func (s *Service) withRinging(ctx context.Context, snap *dialplan.TenantSnapshot, ext string) *dialplan.TenantSnapshot {
	if s.ringing == nil {
		return snap
	}
	calls, err := s.ringing(ctx, snap.Tenant.Tenant, ext)
	if err != nil {
		s.log.Warn("directed pickup: live calls not read", "tenant", snap.Tenant.Tenant, "extension", ext, "err", err)
		return snap
	}
	return snap.WithRinging(ext, calls)
}

// publicSnapshot is the DID called (digits, with or without '+') and its
// tenant's snapshot, with the calling contact's name when the tenant looks
// caller names up; nil for an unknown DID.
func (s *Service) publicSnapshot(ctx context.Context, src *source, p *platformModel, digits, caller string) (*dialplan.PublicSnapshot, error) {
	d, err := s.did(ctx, p, strings.TrimPrefix(digits, "+"))
	if err != nil || d == nil {
		return nil, err
	}
	pub := &dialplan.PublicSnapshot{DID: *d}
	if d.Tenant == "" {
		return pub, nil
	}
	m, err := src.tenant(ctx, d.Tenant)
	if err != nil {
		return nil, err
	}
	// Inbound routing reads no extension.
	if pub.Tenant, err = s.snapshot(ctx, m, p, true, []string{}...); err != nil {
		return nil, err
	}
	if t := &pub.Tenant.Tenant; t.CRMCallerNameLookup {
		pub.CallerContactName, err = s.callerContactName(ctx, t, caller)
	}
	return pub, err
}

// callerContactName is the name of the tenant's contact whose phone is
// caller (read as E.164 with the tenant's country): one query on the
// contacts' phone index. The answer is part of the rendered document,
// which is cached per caller under the tenant's generation, so a contact
// change (a change event of the tenant) drops it like any other.
func (s *Service) callerContactName(ctx context.Context, t *dialplan.Tenant, caller string) (string, error) {
	e164, ok := crm.Normalise(caller, t.Country)
	if !ok {
		return "", nil
	}
	return s.st.ContactNameByPhone(ctx, t.Tenant, e164)
}

func flagsOf(tr dialplan.Trace) string {
	f := ""
	if tr.TimeDependent {
		f += "t"
	}
	if tr.CallerDependent {
		f += "c"
	}
	if tr.LiveDependent {
		f += "l"
	}
	return f
}

// renderTenantConf answers conference.conf and ivr.conf from the routing
// part of the tenant model the named profile or menu belongs to.
func (s *Service) renderTenantConf(ctx context.Context, req *xmlcurl.Request, l lookup, src *source, now time.Time) (rendered, error) {
	var snap *dialplan.TenantSnapshot
	if l.tenant != "" {
		m, err := src.tenant(ctx, l.tenant)
		if err != nil {
			return rendered{}, err
		}
		if snap, err = s.snapshot(ctx, m, nil, true, []string{}...); err != nil {
			return rendered{}, err
		}
	}
	if req.KeyValue == "ivr.conf" {
		return rendered{doc: dialplan.IVRConf(s.opts, *req, snap, now)}, nil
	}
	return rendered{doc: dialplan.ConferenceConf(s.opts, *req, snap)}, nil
}

// renderCallcenter answers callcenter.conf: one queue from its tenant's
// model, or at module load every enabled tenant's queues and agents, read
// fresh (mod_callcenter reads agents and tiers only then; a reload of the
// module is rare, so it is not cached).
func (s *Service) renderCallcenter(ctx context.Context, req *xmlcurl.Request, l lookup, src *source) (rendered, error) {
	var snaps []*dialplan.TenantSnapshot
	if l.everyTenant {
		all, err := s.everyTenantQueues(ctx)
		if err != nil {
			return rendered{}, err
		}
		snaps = all
	} else if l.tenant != "" {
		m, err := src.tenant(ctx, l.tenant)
		if err != nil {
			return rendered{}, err
		}
		snap, err := s.snapshot(ctx, m, nil, true, []string{}...)
		if err != nil {
			return rendered{}, err
		}
		snaps = []*dialplan.TenantSnapshot{snap}
	}
	return rendered{doc: dialplan.CallcenterConf(s.opts, *req, snaps)}, nil
}
