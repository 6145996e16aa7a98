package dialplan

import (
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// A webrtc click-to-call widget gives each visitor's browser a short-lived
// directory user (resources.md §2.21). Its user_context is the widget's own
// dialplan context, in which exactly one extension exists: the widget's
// number, which transfers to the widget's destination in the tenant
// context. Nothing else routes there: no outbound routes, no other
// extension of the tenant, no feature codes.

// Widget is what a widget's directory user and context render from: the
// widget row as stored, its tenant's snapshot (enabled, name).
type Widget struct {
	PublicID           string
	Enabled            bool
	WebRTC             bool // mode webrtc; a callback widget issues no users
	Destination        Destination
	CallerIDNamePrefix string
}

// WidgetUser is one issued visitor user.
type WidgetUser struct {
	ID         string // naming.WidgetUserID
	A1Hash     string // md5(id:domain:password) as issued
	CallerName string // the visitor's name ("" when not asked)
}

// widgetUsable reports whether w may be rendered for snap's tenant.
func widgetUsable(opts Options, w *Widget, snap *TenantSnapshot) bool {
	return w != nil && w.Enabled && w.WebRTC && snap != nil && snap.Tenant.Enabled && validTenant(snap.Tenant.Tenant) &&
		validHost(opts.Domain) && validNumber(w.Destination.Target)
}

// WidgetCallerName is the caller id name a widget visitor's calls carry:
// the widget's prefix (operator text) and the visitor's name (caller data:
// everything FreeSWITCH could expand is removed).
func WidgetCallerName(prefix, visitor string) string {
	return neutraliseExpansion(cleanDisplay(sanitizeName(prefix)+" "+sanitizeCallerName(visitor), ""))
}

// WidgetDirectory answers a directory fetch for a widget visitor's user:
// sip_auth (REGISTER, INVITE) and user lookups without action. Anything
// else (user_call, reverse auth, voicemail counts) finds no user: the
// visitor is never called and has no mailbox. The user is not cacheable,
// so FreeSWITCH asks again and an expired user is refused at once.
func WidgetDirectory(opts Options, req xmlcurl.Request, w *Widget, u *WidgetUser, snap *TenantSnapshot) []byte {
	tenant, ok := naming.SplitWidgetUserID(req.User)
	domain := firstNonEmpty(req.Domain, req.KeyValue)
	if !ok || u == nil || u.ID != req.User || !widgetUsable(opts, w, snap) || !strings.EqualFold(tenant, snap.Tenant.Tenant) ||
		!strings.EqualFold(domain, opts.Domain) || (req.Action != "sip_auth" && req.Action != "") ||
		(req.Key != "" && req.Key != "id") || len(u.A1Hash) != 32 || !allIn(u.A1Hash, "0123456789abcdef") {
		return xmldoc.NotFound()
	}
	w2 := xmldoc.NewWriter(2048)
	openDomain(w2, opts)
	w2.Raw("<users>\n<user")
	w2.Attr("id", u.ID)
	w2.Raw(">\n<params>\n")
	w2.Param("param", "a1-hash", u.A1Hash)
	w2.Param("param", "vm-enabled", "false")
	w2.Param("param", "max-registrations-per-extension", "1")
	w2.Param("param", "directory-visible", "false")
	w2.Param("param", "directory-exten-visible", "false")
	w2.Raw("</params>\n<variables>\n")
	for _, v := range [][2]string{
		{"user_context", naming.WidgetContext(w.PublicID)},
		{"sb_tenant", snap.Tenant.Tenant},
		{"sb_widget", w.PublicID},
		{"effective_caller_id_name", WidgetCallerName(w.CallerIDNamePrefix, u.CallerName)},
		{"effective_caller_id_number", "widget"},
		{"toll_allow", ""},
	} {
		w2.Param("variable", v[0], v[1])
	}
	w2.Raw("</variables>\n</user>\n</users>\n")
	closeDomain(w2)
	return w2.Bytes()
}

// WidgetDialplan renders a widget's context: one extension, the widget's
// number (its destination's target), whose actions are the destination's
// as any route renders them. Any other number finds no match.
func WidgetDialplan(opts Options, req xmlcurl.Request, w *Widget, snap *TenantSnapshot) ([]byte, Trace) {
	num := req.DestinationNumber()
	tr := Trace{Context: req.Context(), Number: num, Caller: req.CallerNumber()}
	id, ok := naming.WidgetPublicID(req.Context())
	if !ok || !widgetUsable(opts, w, snap) || id != w.PublicID {
		tr.Reason = "unknown context"
		return xmldoc.NotFound(), tr
	}
	if num != w.Destination.Target {
		tr.Reason = "no match"
		return xmldoc.NotFound(), tr
	}
	p := &planner{opts: opts, snap: snap, tenant: snap.Tenant.Tenant, trace: &tr, req: req}
	acts, ok := p.destination(w.Destination)
	if !ok {
		tr.Reason = "destination not rendered"
		return xmldoc.NotFound(), tr
	}
	tr.Match = "widget"
	e := single("widget", num, acts)
	return writeDialplan(req.Context(), []ext{*e}), tr
}
