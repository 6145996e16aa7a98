package routes

import (
	"context"
	"errors"
	"strings"

	"github.com/switchboard/switchboard/internal/comms/chat"
	"github.com/switchboard/switchboard/internal/comms/chat/webclient"
	"github.com/switchboard/switchboard/internal/models"
)

// The web client's branding and the agents' names in it. The page names
// its tenant (the bundle's login_url carries ?tenant=), so the login view
// already shows the tenant's product name, colours and logo: the tenant's
// branding resource, each empty field from its reseller's branding, the
// product name last from the installation's name (resources.md §3.2). An
// unknown tenant is answered as no tenant, so the page tells nobody which
// tenants exist.

// clientBranding fills s with the branding of tenant ("" = none).
func (r *chatRoutes) clientBranding(ctx context.Context, s *webclient.Settings, tenant string) error {
	s.Name = r.Name
	if s.Name == "" {
		s.Name = "Switchboard"
	}
	if tenant == "" {
		return nil
	}
	o, err := r.Store.Tenant(ctx, tenant)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	own, err := r.Store.Get(ctx, resourceNamed("branding"), o, "")
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return err
	}
	inherited, err := r.resellerBranding(ctx, o)
	if err != nil {
		return err
	}
	field := func(name string) string {
		if v := strings.TrimSpace(str(own[name])); v != "" {
			return v
		}
		return strings.TrimSpace(str(inherited[name]))
	}
	if n := field("product_name"); n != "" {
		s.Name = n
	}
	b := webclient.Branding{PrimaryColor: field("primary_color"), SecondaryColor: field("secondary_color"), Logo: field("logo"), Favicon: field("favicon"),
		LoginMessage: field("login_message"), SupportURL: field("support_url"), SupportEmail: field("support_email")}
	if b != (webclient.Branding{}) {
		s.Branding = &b
	}
	return nil
}

// resellerBranding is the branding object of the tenant's reseller, if any.
func (r *chatRoutes) resellerBranding(ctx context.Context, o models.Owner) (map[string]any, error) {
	t, err := r.Store.Get(ctx, resourceNamed("tenants"), models.Owner{}, o.Tenant)
	if err != nil {
		return nil, err
	}
	id := str(t["reseller_id"])
	if id == "" {
		return nil, nil
	}
	rs, err := r.Store.Get(ctx, resourceNamed("resellers"), models.Owner{}, id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, _ := rs["branding"].(map[string]any)
	return b, nil
}

// agentName is the name people know an extension's user by: its first
// and last name, else the name of its caller ID ("Ava Agent <1001>"), else
// "" (the client then shows the account).
func agentName(ext models.Record) string {
	if n := strings.TrimSpace(str(ext["first_name"]) + " " + str(ext["last_name"])); n != "" {
		return n
	}
	cid := str(ext["callerid"])
	if i := strings.Index(cid, "<"); i > 0 {
		return strings.Trim(strings.TrimSpace(cid[:i]), `"`)
	}
	return ""
}

// setAgentName gives an agent's chat account its display name (its
// vCard's FN, which clients show for the account instead of its address).
func (r *chatRoutes) setAgentName(ctx context.Context, o models.Owner, ext string) error {
	rec, err := r.Store.Get(ctx, resourceNamed("extensions"), o, ext)
	if err != nil {
		return err
	}
	name := agentName(rec)
	if name == "" {
		return nil
	}
	return r.Chat.SetFullName(ctx, chat.UserLocal(o.Tenant, ext), name)
}
