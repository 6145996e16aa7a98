package dialplan

import (
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// Fax to e-mail (resources.md §2.13, application fax_to_email): the node
// receives the fax with mod_spandsp's rxfax into its media directory and,
// when the call ends, uploads the TIFF to the control plane with
// mod_http_cache's http_put API ("http_put <url> <file>"), run by the
// channel's api_hangup_hook. The hook runs in the hangup state, after
// rxfax has closed the file, whichever side hangs up (a sending machine
// usually does). Switchboard then e-mails it (package fax).
//
// The upload URL is signed per call: the signature covers tenant, endpoint
// and the call's Unique-ID, so a URL read from a node's log lets nobody
// upload for another call. The answer is therefore never cached (it is
// LiveDependent, like a directed pickup).

// faxSigDomain separates fax-upload signatures from media-file ones made
// with the same key.
const faxSigDomain = "fs-fax\x00"

// SignFax is the signature of a fax upload path.
func (m MediaURLs) SignFax(path string) string { return m.Sign(faxSigDomain + path) }

// VerifyFax says whether sig is the signature of the fax upload path.
func (m MediaURLs) VerifyFax(path, sig string) bool { return m.Verify(faxSigDomain+path, sig) }

// FaxUploadURL is where a node PUTs the fax of one call: /fs/fax next to
// the configured /fs/media base. "" when the base is not a /media address
// or a part is unsafe to render.
func (m MediaURLs) FaxUploadURL(tenant string, endpointID int64, callUUID string) string {
	base, ok := strings.CutSuffix(strings.TrimRight(m.Base, "/"), "/media")
	if !ok || !validMediaBase(m.Base) || len(m.Key) == 0 || !validTenant(tenant) || endpointID <= 0 || !naming.ValidCallUUID(callUUID) {
		return ""
	}
	path := naming.FaxPath(tenant, endpointID, callUUID)
	return base + "/fax/" + path + "?sig=" + m.SignFax(path)
}

// faxReceive receives a fax into <MediaDir>/<tenant>/fax/<call uuid>.tif on
// the node and hands it to Switchboard at hangup. Without a media URL base
// (or a call id in the fetch, as in a routing trace) the fax stays on the
// node (the old behaviour).
func (p *planner) faxReceive(e *SpecialEndpoint) []action {
	dir := strings.TrimRight(p.opts.MediaDir, "/")
	if dir == "" || !validToken(strings.ReplaceAll(dir, "/", "_"), "") {
		p.trace.Reason = "special endpoint: no media directory for faxes"
		return nil
	}
	p.trace.LiveDependent = true
	acts := []action{act("answer", ""), act("playback", "silence_stream://2000")}
	callUUID := p.req.Get("Unique-ID")
	upload := p.opts.Media.FaxUploadURL(p.tenant, e.ID, callUUID)
	if upload == "" {
		return append(acts, act("rxfax", dir+"/"+p.tenant+"/fax/${uuid}.tif"), act("hangup", "NORMAL_CLEARING"))
	}
	file := dir + "/" + p.tenant + "/fax/" + callUUID + ".tif"
	return append(acts, set("api_hangup_hook", "http_put "+upload+" "+file),
		act("rxfax", file), act("hangup", "NORMAL_CLEARING"))
}
