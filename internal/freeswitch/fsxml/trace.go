package fsxml

import (
	"context"
	"net/url"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
)

// TraceResult explains a routing decision: the context rendered, why the
// call went where it did, and the exact XML FreeSWITCH would receive.
type TraceResult struct {
	Context string         `json:"context"`
	Trace   dialplan.Trace `json:"trace"`
	XML     string         `json:"xml"`
}

// TraceTenant renders the tenant context (tenant must be the canonical
// name) for a call from an extension or number to a dialled number at a
// given time, from models read fresh from the database (no cache).
func (s *Service) TraceTenant(ctx context.Context, tenant, from, to string, at time.Time) (*TraceResult, error) {
	src := &source{s: s, fresh: true}
	m, err := src.tenant(ctx, tenant)
	if err != nil {
		return nil, err
	}
	p, err := src.platform(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := s.snapshot(ctx, m, p, true, to, dialplan.DestinationExtension(to), from)
	if err != nil {
		return nil, err
	}
	form := url.Values{
		"section":                   {"dialplan"},
		"Caller-Context":            {tenant},
		"Caller-Destination-Number": {to},
		"Caller-Caller-ID-Number":   {from},
		"variable_sb_tenant":        {tenant},
	}
	if snap != nil && snap.ExtensionNamed(from) != nil {
		form.Set("variable_sb_ext", from) // the caller is one of ours
	}
	if ext, ok := dialplan.DirectedPickupTarget(snap, to); ok {
		snap = s.withRinging(ctx, snap, ext)
	}
	snap = s.withHuntTurn(ctx, snap, to, false)
	doc, tr := dialplan.Dialplan(s.opts, xmlcurl.ParseForm(form), nil, snap, at)
	return &TraceResult{Context: tenant, Trace: tr, XML: string(doc)}, nil
}

// TracePublic renders the public context for a call from a number to a
// DID at a given time, from models read fresh from the database.
func (s *Service) TracePublic(ctx context.Context, did, from string, at time.Time) (*TraceResult, error) {
	src := &source{s: s, fresh: true}
	p, err := src.platform(ctx)
	if err != nil {
		return nil, err
	}
	pub, err := s.publicSnapshot(ctx, src, p, did, from)
	if err != nil {
		return nil, err
	}
	form := url.Values{
		"section":                   {"dialplan"},
		"Caller-Context":            {"public"},
		"Caller-Destination-Number": {did},
		"Caller-Caller-ID-Number":   {from},
	}
	doc, tr := dialplan.Dialplan(s.opts, xmlcurl.ParseForm(form), pub, nil, at)
	return &TraceResult{Context: "public", Trace: tr, XML: string(doc)}, nil
}
