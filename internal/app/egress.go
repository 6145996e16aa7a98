package app

import (
	"fmt"
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

var egressVariables = []envVar{
	{"SWITCHBOARD_EGRESS_ALLOWED_HOSTS", "", "hosts a tenant may name in a messaging provider URL (Kannel's credentials.sendsms_url), comma-separated: exact names or addresses, *.example.net for the names under a domain, * for any; unset: none (Kannel and SMPP channels are refused)"},
	{"SWITCHBOARD_EGRESS_ALLOWED_NETS", "", "CIDRs of loopback, private or link-local addresses those provider URLs may still connect to (a Kannel on the operator's network, e.g. 10.0.5.7/32); unset: only public addresses"},
}

func init() { Variables = append(Variables, egressVariables...) }

func loadEgressConfig(get func(name, def string) string) (EgressConfig, error) {
	var c EgressConfig
	var err error
	if c.Hosts, err = egress.ParseHosts(get("SWITCHBOARD_EGRESS_ALLOWED_HOSTS", "")); err != nil {
		return c, fmt.Errorf("SWITCHBOARD_EGRESS_ALLOWED_HOSTS: %v", err)
	}
	if c.Nets, err = egress.ParseNets(get("SWITCHBOARD_EGRESS_ALLOWED_NETS", "")); err != nil {
		return c, fmt.Errorf("SWITCHBOARD_EGRESS_ALLOWED_NETS: %v", err)
	}
	return c, nil
}
