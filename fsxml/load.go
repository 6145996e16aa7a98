package fsxml

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard/switchboard/dialplan"
	"github.com/switchboard/switchboard/models"
)

// load decodes a resource's records into dst (a pointer to a slice of
// dialplan types, whose JSON names equal the registry field names).
func (s *Service) load(ctx context.Context, res string, o models.Owner, where map[string]any, dst any) error {
	r := s.st.Registry().Resource(res)
	if r == nil {
		return fmt.Errorf("load %s: unknown resource", res)
	}
	recs, err := s.st.Records(ctx, r, o, where)
	if err != nil {
		return err
	}
	b, err := json.Marshal(recs)
	if err != nil {
		return fmt.Errorf("load %s: %w", res, err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("load %s: %w", res, err)
	}
	return nil
}

// tenant loads the tenant record; a nil snapshot means no such tenant.
func (s *Service) tenant(ctx context.Context, name string) (*dialplan.TenantSnapshot, models.Owner, error) {
	if name == "" {
		return nil, models.Owner{}, nil
	}
	o, err := s.st.Tenant(ctx, name)
	if errors.Is(err, models.ErrNotFound) {
		return nil, models.Owner{}, nil
	}
	if err != nil {
		return nil, o, err
	}
	var ts []dialplan.Tenant
	if err := s.load(ctx, "tenants", models.Owner{}, map[string]any{"tenant": o.Tenant}, &ts); err != nil {
		return nil, o, err
	}
	if len(ts) == 0 {
		return nil, o, nil
	}
	return &dialplan.TenantSnapshot{Tenant: ts[0]}, o, nil
}

// extensions loads the named extensions only (the hot path never loads a
// whole tenant for one user).
func (s *Service) extensions(ctx context.Context, snap *dialplan.TenantSnapshot, o models.Owner, names ...string) error {
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		var xs []dialplan.Extension
		if err := s.load(ctx, "extensions", o, map[string]any{"name": n}, &xs); err != nil {
			return err
		}
		snap.Extensions = append(snap.Extensions, xs...)
	}
	return nil
}

// directorySnapshot loads what a directory fetch for user (or group) needs.
func (s *Service) directorySnapshot(ctx context.Context, tenant, ext string, group bool) (*dialplan.TenantSnapshot, error) {
	snap, o, err := s.tenant(ctx, tenant)
	if err != nil || snap == nil {
		return snap, err
	}
	if group {
		err = s.load(ctx, "extensions", o, nil, &snap.Extensions)
		return snap, err
	}
	if err := s.extensions(ctx, snap, o, ext); err != nil {
		return nil, err
	}
	if len(snap.Extensions) == 0 {
		return snap, nil
	}
	err = s.load(ctx, "emergency_locations", o, nil, &snap.EmergencyLocations)
	return snap, err
}

// routingParts loads the objects that decide where a call goes: routing
// conditions, schedules and office mode.
func (s *Service) routingParts(ctx context.Context, snap *dialplan.TenantSnapshot, o models.Owner) error {
	if err := s.load(ctx, "routing_conditions", o, nil, &snap.RoutingConditions); err != nil {
		return err
	}
	if err := s.load(ctx, "schedules", o, nil, &snap.Schedules); err != nil {
		return err
	}
	var om []dialplan.OfficeMode
	if err := s.load(ctx, "office_mode", o, nil, &om); err != nil {
		return err
	}
	if len(om) > 0 {
		snap.OfficeMode = &om[0]
	}
	return nil
}

// tenantContextSnapshot loads a tenant context render for a dialled number:
// the extensions it may touch (the dialled one, the failover target and the
// calling one), conditions, features, outbound routes, usable trunks and
// emergency locations.
func (s *Service) tenantContextSnapshot(ctx context.Context, tenant, dialled, caller string) (*dialplan.TenantSnapshot, error) {
	snap, o, err := s.tenant(ctx, tenant)
	if err != nil || snap == nil {
		return snap, err
	}
	if err := s.extensions(ctx, snap, o, dialled, strings.TrimPrefix(dialled, "fail-"), caller); err != nil {
		return nil, err
	}
	if err := s.routingParts(ctx, snap, o); err != nil {
		return nil, err
	}
	for res, dst := range map[string]any{
		"feature_extensions":  &snap.FeatureExtensions,
		"outbound_routes":     &snap.OutboundRoutes,
		"emergency_locations": &snap.EmergencyLocations,
	} {
		if err := s.load(ctx, res, o, nil, dst); err != nil {
			return nil, err
		}
	}
	trunks, err := s.trunks(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range trunks {
		if len(t.Tenants) == 0 || containsFold(t.Tenants, snap.Tenant.Tenant) {
			snap.Trunks = append(snap.Trunks, t)
		}
	}
	return snap, nil
}

// publicSnapshot loads the DID called (with or without '+') and the part
// of its tenant inbound routing needs. A nil result means unknown DID.
func (s *Service) publicSnapshot(ctx context.Context, number string) (*dialplan.PublicSnapshot, error) {
	did, err := s.did(ctx, number)
	if err != nil {
		return nil, err
	}
	return s.publicFor(ctx, did)
}

// publicFor completes a public snapshot for a DID already loaded (nil:
// unknown DID).
func (s *Service) publicFor(ctx context.Context, did *dialplan.DID) (*dialplan.PublicSnapshot, error) {
	if did == nil {
		return nil, nil
	}
	snap, o, err := s.tenant(ctx, did.Tenant)
	if err != nil {
		return nil, err
	}
	pub := &dialplan.PublicSnapshot{DID: *did, Tenant: snap}
	if snap == nil {
		return pub, nil
	}
	if err := s.load(ctx, "inbound_routes", o, map[string]any{"did": did.Number}, &snap.InboundRoutes); err != nil {
		return nil, err
	}
	if did.InboundRouteID != 0 && !hasRoute(snap.InboundRoutes, did.InboundRouteID) {
		var def []dialplan.InboundRoute
		if err := s.load(ctx, "inbound_routes", o, map[string]any{"id": did.InboundRouteID}, &def); err != nil {
			return nil, err
		}
		snap.InboundRoutes = append(snap.InboundRoutes, def...)
	}
	return pub, s.routingParts(ctx, snap, o)
}

// did finds a DID by number; numbers are stored in E.164 with '+'.
func (s *Service) did(ctx context.Context, number string) (*dialplan.DID, error) {
	if number == "" {
		return nil, nil
	}
	var dids []dialplan.DID
	if err := s.load(ctx, "dids", models.Owner{}, map[string]any{"number": "+" + strings.TrimPrefix(number, "+")}, &dids); err != nil {
		return nil, err
	}
	if len(dids) == 0 {
		return nil, nil
	}
	return &dids[0], nil
}

func (s *Service) trunks(ctx context.Context) ([]dialplan.SIPTrunk, error) {
	var ts []dialplan.SIPTrunk
	err := s.load(ctx, "sip_trunks", models.Owner{}, nil, &ts)
	return ts, err
}

func (s *Service) servers(ctx context.Context) ([]dialplan.Server, error) {
	var ss []dialplan.Server
	err := s.load(ctx, "servers", models.Owner{}, nil, &ss)
	return ss, err
}

func hasRoute(rs []dialplan.InboundRoute, id int64) bool {
	for _, r := range rs {
		if r.ID == id {
			return true
		}
	}
	return false
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// UserVariables returns the channel variables the directory gives tenant's
// extension ext (dialplan.UserVariables), for calls Switchboard places on
// that user's behalf; models.ErrNotFound when there is no such extension.
func (s *Service) UserVariables(ctx context.Context, tenant, ext string) ([][2]string, error) {
	snap, err := s.directorySnapshot(ctx, tenant, ext, false)
	if err != nil {
		return nil, fmt.Errorf("user variables %s@%s: %w", ext, tenant, err)
	}
	if snap == nil || len(snap.Extensions) == 0 {
		return nil, fmt.Errorf("user variables %s@%s: %w", ext, tenant, models.ErrNotFound)
	}
	return dialplan.UserVariables(snap, &snap.Extensions[0]), nil
}
