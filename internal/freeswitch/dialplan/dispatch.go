package dialplan

import (
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
)

// Dialplan renders a dialplan fetch: the public context (pub: the called DID
// and its tenant) or a tenant's context (snap), chosen by req.Context().
func Dialplan(opts Options, req xmlcurl.Request, pub *PublicSnapshot, snap *TenantSnapshot, now time.Time) ([]byte, Trace) {
	if req.Context() == "public" {
		return Public(opts, req, pub, now)
	}
	return TenantContext(opts, req, snap, now)
}
