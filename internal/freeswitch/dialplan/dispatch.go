package dialplan

import (
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// Dialplan renders a dialplan fetch: the public context (pub: the called DID
// and its tenant) or a tenant's context (snap), chosen by req.Context().
func Dialplan(opts Options, req xmlcurl.Request, pub *PublicSnapshot, snap *TenantSnapshot, now time.Time) ([]byte, Trace) {
	if req.Context() == "public" {
		return Public(opts, req, pub, now)
	}
	return TenantContext(opts, req, snap, now)
}

// Configuration renders a platform configuration fetch. Only sofia.conf is
// served here (conference.conf, per tenant, is ConferenceConf); every other
// file gets NotFound, so FreeSWITCH uses its static copy.
func Configuration(opts Options, req xmlcurl.Request, servers []Server, trunks []SIPTrunk) []byte {
	if req.Section != "configuration" || req.KeyValue != "sofia.conf" {
		return xmldoc.NotFound()
	}
	return Sofia(opts, req, servers, trunks)
}
