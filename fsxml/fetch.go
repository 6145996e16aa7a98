package fsxml

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/dialplan"
)

// Fetch answers one mod_xml_curl POST body with the XML document to send
// back. Cached documents are served after one Redis round trip; on a miss
// (or when Redis is down) the snapshot is loaded and rendered. An error
// means the database failed; FreeSWITCH then falls back to its own files.
func (s *Service) Fetch(ctx context.Context, body []byte) ([]byte, error) {
	req := dialplan.ParseRequest(body)
	now := s.now()
	l, ok := lookupFor(&req, now)
	if !ok {
		return dialplan.NotFound(), nil
	}
	cacheOK := s.redisUp()
	var h hit
	var g gens // set when the fast path read the generations
	if cacheOK && l.did == "" {
		// Fast path: the generations, then the document from memory.
		var err error
		if g, err = s.generations(ctx, l.tenant); err != nil {
			s.warnRedis("xml cache unavailable", err)
			cacheOK = false
		} else if !s.fresh(ctx, l.tenant, g.pgen, g.tgen) {
			cacheOK = false
		} else if doc := s.local.get(g, l); doc != nil {
			return doc, nil
		}
	}
	if cacheOK && l.did != "" {
		// Public context: the DID's tenant, learnt under these platform
		// generations, gives the tenant generation to read.
		if m, ok := s.local.did(l.did); ok {
			g2, err := s.generations(ctx, m.tenant)
			switch {
			case err != nil:
				s.warnRedis("xml cache unavailable", err)
				cacheOK = false
			case !s.fresh(ctx, m.tenant, g2.pgen, g2.tgen):
				cacheOK = false
			case g2.epoch == m.epoch && g2.pgen == m.pgen:
				g = g2
				if doc := s.local.get(g, l); doc != nil {
					return doc, nil
				}
			}
		}
	}
	// keepLocal remembers a plain document read or rendered under the
	// generations the fast path saw (not newer ones a concurrent write made).
	keepLocal := func(doc []byte, flags string) {
		if g.epoch != "" && h.pgen == g.pgen && h.tgen == g.tgen {
			s.local.put(g.localKey(l)+variant(flags, l), doc)
		}
	}
	if cacheOK {
		var err error
		if h, err = s.probe(ctx, l); err != nil {
			s.warnRedis("xml cache unavailable", err)
			cacheOK = false
		} else if !s.fresh(ctx, h.tenant, h.pgen, h.tgen) {
			cacheOK = false
		} else if l.did != "" && g.epoch == "" && h.didKnown && h.tenant != "" {
			s.learnDID(ctx, l.did, h, &g)
		}
		if cacheOK && h.doc != nil {
			keepLocal(h.doc, h.flags)
			return h.doc, nil
		}
	}
	r, err := s.render(ctx, &req, l, &h, cacheOK, now)
	if err != nil {
		return nil, err
	}
	if cacheOK && !r.noCache {
		ttl := s.cfg.TTL
		switch {
		case dialplan.IsNotFound(r.doc):
			ttl = min(ttl, time.Minute)
		case strings.Contains(r.flags, "t"):
			ttl = min(ttl, 2*time.Minute)
		}
		if err := s.save(ctx, h, l, r.flags, r.doc, ttl, r.didTenant); err != nil {
			s.warnRedis("xml cache unavailable", err)
		} else {
			keepLocal(r.doc, r.flags)
		}
	}
	return r.doc, nil
}

// learnDID records which tenant a DID belongs to under the platform
// generation the probe saw, so later fetches of it take the fast path.
func (s *Service) learnDID(ctx context.Context, did string, h hit, g *gens) {
	g2, err := s.generations(ctx, h.tenant)
	if err != nil || g2.pgen != h.pgen || g2.tgen != h.tgen {
		return // a write raced the probe: learn it next time
	}
	*g = g2
	s.local.putDID(did, didEntry{epoch: g2.epoch, pgen: g2.pgen, tenant: h.tenant})
}

// lookupFor derives the cache probe from the request: the tenant whose
// generation applies and every request field the render reads. ok is false
// for requests that are answered NotFound without looking at anything.
func lookupFor(req *dialplan.Request, now time.Time) (lookup, bool) {
	l := lookup{minute: strconv.FormatInt(now.Unix()/60, 10)}
	switch req.Section {
	case "directory":
		group := req.Group
		if req.Action == "group_call" {
			if group == "" {
				group = req.Get("group_name")
			}
			l.tenant = strings.ToLower(group)
		} else if _, tenant, ok := dialplan.SplitUserID(req.User); ok {
			l.tenant = strings.ToLower(tenant)
		}
		l.key = keyPart(strings.Join([]string{"d", req.Action, req.User, req.Domain, req.KeyValue, req.Key, group}, "|"))
	case "dialplan":
		dest := req.DestinationNumber()
		l.caller = keyPart(req.CallerNumber() + "|" + req.Get("Caller-Caller-ID-Name"))
		if req.Context() == "public" {
			l.did = strings.TrimPrefix(dest, "+")
			l.key = keyPart("p|" + dest)
		} else {
			l.tenant = strings.ToLower(req.Context())
			l.key = keyPart(strings.Join([]string{"x", req.Context(), dest, req.Ext, req.Tenant}, "|"))
		}
	case "configuration":
		if req.KeyValue != "sofia.conf" {
			return l, false
		}
		l.key = keyPart(strings.Join([]string{"c", req.KeyValue, req.Hostname, req.IPv4, req.Profile}, "|"))
	default:
		return l, false
	}
	return l, true
}

// rendered is a render and what its cache entry depends on.
type rendered struct {
	doc       []byte
	flags     string // "t" time, "c" caller
	didTenant string // public: the DID's tenant ("-" none), to map the DID
	noCache   bool   // the generations could not be read: do not store
}

func (s *Service) render(ctx context.Context, req *dialplan.Request, l lookup, h *hit, cacheOK bool, now time.Time) (rendered, error) {
	switch req.Section {
	case "directory":
		ext, tenant, _ := dialplan.SplitUserID(req.User)
		group := req.Action == "group_call"
		if group {
			tenant = l.tenant
		}
		snap, err := s.directorySnapshot(ctx, tenant, ext, group)
		if err != nil {
			return rendered{}, err
		}
		return rendered{doc: dialplan.Directory(s.opts, *req, snap)}, nil
	case "configuration":
		servers, err := s.servers(ctx)
		if err != nil {
			return rendered{}, err
		}
		trunks, err := s.trunks(ctx)
		if err != nil {
			return rendered{}, err
		}
		return rendered{doc: dialplan.Configuration(s.opts, *req, servers, trunks)}, nil
	}
	if req.Context() == "public" {
		return s.renderPublic(ctx, req, l, h, cacheOK, now)
	}
	snap, err := s.tenantContextSnapshot(ctx, req.Context(), req.DestinationNumber(), req.Ext)
	if err != nil {
		return rendered{}, err
	}
	doc, tr := dialplan.Dialplan(s.opts, *req, nil, snap, now)
	return rendered{doc: doc, flags: flagsOf(tr)}, nil
}

// renderPublic loads the DID first: when the cache did not know its
// tenant yet, that tenant's generation must be read before its routes are.
func (s *Service) renderPublic(ctx context.Context, req *dialplan.Request, l lookup, h *hit, cacheOK bool, now time.Time) (rendered, error) {
	did, err := s.did(ctx, l.did)
	if err != nil {
		return rendered{}, err
	}
	r := rendered{didTenant: "-"}
	if did != nil && did.Tenant != "" {
		r.didTenant = strings.ToLower(did.Tenant)
	}
	if cacheOK && !h.didKnown {
		h.tgen = "0"
		if r.didTenant != "-" {
			if h.tgen, err = s.genOf(ctx, r.didTenant); err != nil {
				s.warnRedis("xml cache unavailable", err)
				cacheOK = false
			} else if !s.fresh(ctx, r.didTenant, h.pgen, h.tgen) {
				cacheOK = false
			}
		}
	}
	pub, err := s.publicFor(ctx, did)
	if err != nil {
		return rendered{}, err
	}
	doc, tr := dialplan.Dialplan(s.opts, *req, pub, nil, now)
	r.doc, r.flags = doc, flagsOf(tr)
	r.noCache = !cacheOK
	return r, nil
}

func flagsOf(tr dialplan.Trace) string {
	f := ""
	if tr.TimeDependent {
		f += "t"
	}
	if tr.CallerDependent {
		f += "c"
	}
	return f
}
