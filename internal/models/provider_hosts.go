package models

import (
	"context"
	"fmt"

	"github.com/switchboard/switchboard/internal/platform/egress"
)

// SetProviderHosts sets the hosts messaging channels may name in provider
// URLs (SWITCHBOARD_EGRESS_ALLOWED_HOSTS); until set, none.
func (s *Store) SetProviderHosts(h egress.Hosts) { s.providerHosts = h }

// providerURLKeys are the credentials that name a URL the server sends
// to, by provider.
var providerURLKeys = map[string][]string{
	"kannel": {"sendsms_url"},
	"smpp":   {"sendsms_url"},
}

// messagingChannelHooks add to the channel rules the check of provider
// URLs against the operator's host list: a tenant cannot point the
// server's requests (carrying the channel's credentials) at a host the
// operator did not allow, loopback and the internal network included.
type messagingChannelHooks struct{ rules }

var _ beforeSaver = messagingChannelHooks{}

func (h messagingChannelHooks) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	if err := h.rules.beforeSave(ctx, ts, o, old, patch); err != nil {
		return err
	}
	creds, _ := patch["credentials"].(map[string]any)
	for _, k := range providerURLKeys[fmt.Sprint(merged(old, patch)["provider"])] {
		raw, _ := creds[k].(string)
		if raw == "" {
			continue // a missing key is checkCredentials' to name
		}
		field := "credentials." + k
		u, err := egress.CheckURL(raw, true)
		if err != nil {
			return FieldError(field, "must be an absolute http or https URL without user name or password")
		}
		if !ts.providerHosts.Allows(u.Hostname()) {
			return FieldError(field, "host %s is not one the platform operator allows provider URLs to name (SWITCHBOARD_EGRESS_ALLOWED_HOSTS)", u.Hostname())
		}
	}
	return nil
}
