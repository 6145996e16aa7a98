package app

import (
	"net/netip"

	"github.com/switchboard/switchboard/internal/platform/egress"
)

// EgressConfig is the operator's rule for requests to addresses tenants
// name in messaging provider URLs (Kannel's sendsms_url).
type EgressConfig struct {
	Hosts egress.Hosts   // SWITCHBOARD_EGRESS_ALLOWED_HOSTS
	Nets  []netip.Prefix // SWITCHBOARD_EGRESS_ALLOWED_NETS
}

// Guard is the connect-time address guard of provider requests.
func (c EgressConfig) Guard() egress.Guard { return egress.Guard{Nets: c.Nets} }
