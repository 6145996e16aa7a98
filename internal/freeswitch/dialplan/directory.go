package dialplan

import (
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// dialString is the domain's dial-string param (freeswitch.md §2.2), needed
// by user/ dialling (action user_call). Fixed text: no user value in it.
//
// media_mix_inbound_outbound_codecs=true is what lets FreeSWITCH transcode
// to a phone: on an outbound leg with an originator,
// switch_core_media_prepare_codecs offers only the originator's codec
// unless that variable is true on the leg (the profile's
// outbound-codec-prefs are not used), so a PCMA-only caller reached a
// phone answering PCMU as INCOMPATIBLE_DESTINATION (FreeSWITCH 1.10.12).
// With it the leg offers the caller's codec first, then the profile's.
// The leg reads it from its own variables, which the dial string's {}
// sets; the directory's <variables> would only reach the calling leg.
// Trunk legs need nothing: a gateway's absolute_codec_string wins.
const dialString = "{^^:sip_invite_domain=${dialed_domain}:presence_id=${dialed_user}@${dialed_domain}:media_mix_inbound_outbound_codecs=true}${sofia_contact(*/${dialed_user}@${dialed_domain})}"

// Directory renders the answer to a directory fetch. snap is the tenant named
// by the requested user id (or by the group for group_call); it may be nil
// for domain-only fetches. The domain asked for must be opts.Domain.
//
//   - sip_auth, user_call, message-count, event_socket_auth and lookups with
//     no action: the one user "<ext>-<tenant>" (or special mailbox).
//   - reverse-auth-lookup: the same user plus reverse-auth-user/-pass.
//   - group_call: the tenant's users as pointers in group "<tenant>".
//   - no user (purpose=gateways, network-list, ...): the domain alone.
//   - a tenant's dial-by-name domain (naming.DirectoryDomain): its listed names.
//
// Anything unknown, disabled or from another tenant yields NotFound.
func Directory(opts Options, req xmlcurl.Request, snap *TenantSnapshot) []byte {
	domain := firstNonEmpty(req.Domain, req.KeyValue)
	if tenant, ok := naming.DirectoryDomainTenant(domain); ok {
		// mod_directory's names: only the domain-only fetch is answered.
		if req.User != "" || req.Action != "" || snap == nil || !snap.Tenant.Enabled || !strings.EqualFold(snap.Tenant.Tenant, tenant) || !validTenant(snap.Tenant.Tenant) {
			return xmldoc.NotFound()
		}
		return directoryDomain(snap)
	}
	if domain == "" || !strings.EqualFold(domain, opts.Domain) || !validHost(opts.Domain) {
		return xmldoc.NotFound()
	}
	if req.Action == "group_call" {
		return directoryGroup(opts, req, snap)
	}
	if req.User == "" {
		w := xmldoc.NewWriter(1024)
		openDomain(w, opts)
		closeDomain(w)
		return w.Bytes()
	}
	ext, tenant, ok := naming.SplitUserID(req.User)
	if !ok || snap == nil || !snap.Tenant.Enabled || !strings.EqualFold(snap.Tenant.Tenant, tenant) || !validTenant(snap.Tenant.Tenant) {
		return xmldoc.NotFound()
	}
	if req.Key != "" && req.Key != "id" && req.Key != "number-alias" {
		return xmldoc.NotFound()
	}
	reverse := req.Action == "reverse-auth-lookup"
	w := xmldoc.NewWriter(4096)
	if e := snap.extension(ext); e != nil {
		if !e.Enabled {
			return xmldoc.NotFound()
		}
		openDomain(w, opts)
		w.Raw("<groups>\n<group")
		w.Attr("name", snap.Tenant.Tenant)
		w.Raw(">\n<users>\n")
		writeUser(w, opts, snap, e, reverse)
		w.Raw("</users>\n</group>\n</groups>\n")
		closeDomain(w)
		return w.Bytes()
	}
	if m := snap.mailbox(ext); m != nil && m.Enabled && !reverse {
		openDomain(w, opts)
		w.Raw("<users>\n")
		writeMailboxUser(w, opts, snap, m)
		w.Raw("</users>\n")
		closeDomain(w)
		return w.Bytes()
	}
	return xmldoc.NotFound()
}

// directoryGroup renders group_call: the group name is the tenant name and
// its users are pointers, so no secret is sent; FreeSWITCH looks each one up
// with user_call when it dials.
func directoryGroup(opts Options, req xmlcurl.Request, snap *TenantSnapshot) []byte {
	group := firstNonEmpty(req.Group, req.Get("group_name"))
	if snap == nil || !snap.Tenant.Enabled || !strings.EqualFold(group, snap.Tenant.Tenant) || !validTenant(snap.Tenant.Tenant) {
		return xmldoc.NotFound()
	}
	w := xmldoc.NewWriter(256 + 64*snap.ExtensionCount())
	openDomain(w, opts)
	w.Raw("<groups>\n<group")
	w.Attr("name", snap.Tenant.Tenant)
	w.Raw(">\n<users>\n")
	for e := range snap.eachExtension() {
		if !e.Enabled || !validNumber(e.Name) {
			continue
		}
		w.Raw("<user")
		w.Attr("id", naming.UserID(snap.Tenant.Tenant, e.Name))
		w.Raw(" type=\"pointer\"/>\n")
	}
	w.Raw("</users>\n</group>\n</groups>\n")
	closeDomain(w)
	return w.Bytes()
}

func openDomain(w *xmldoc.Writer, opts Options) {
	xmldoc.OpenSection(w, "directory")
	w.Raw("<domain")
	w.Attr("name", opts.Domain)
	w.Raw(">\n<params>\n")
	w.Param("param", "dial-string", dialString)
	w.Raw("</params>\n<variables>\n")
	w.Param("variable", "record_stereo", "true")
	w.Raw("</variables>\n")
}

func closeDomain(w *xmldoc.Writer) {
	w.Raw("</domain>\n")
	xmldoc.CloseSection(w)
}

// writeUser renders one extension as a directory user.
func writeUser(w *xmldoc.Writer, opts Options, snap *TenantSnapshot, e *Extension, reverse bool) {
	id := naming.UserID(snap.Tenant.Tenant, e.Name)
	w.Raw("<user")
	w.Attr("id", id)
	w.Attr("cacheable", itoa(cacheMS(opts)))
	w.Raw(">\n<params>\n")
	w.Param("param", "a1-hash", naming.A1Hash(id, opts.Domain, e.SIPSecret))
	if reverse {
		w.Param("param", "reverse-auth-user", id)
		w.Param("param", "reverse-auth-pass", e.SIPSecret)
	}
	writeVoicemailParams(w, naming.VoicemailStorageDir(opts.MediaDir, snap.Tenant.Tenant, e.Name), e.VoicemailEnabled, e.VoicemailPIN, []string{firstNonEmpty(e.VoicemailEmail, e.Email)}, e.VoicemailAttachAudio, e.VoicemailDeleteAfterEmail)
	maxReg := int(e.MaxRegistrations)
	if maxReg <= 0 {
		maxReg = 5
	}
	w.Param("param", "max-registrations-per-extension", itoa(maxReg))
	w.Param("param", "directory-visible", boolStr(e.DirectoryVisible))
	w.Param("param", "directory-exten-visible", boolStr(e.DirectoryExtensionVisible))
	w.Raw("</params>\n<variables>\n")
	for _, v := range UserVariables(snap, e) {
		w.Param("variable", v[0], v[1])
	}
	w.Raw("</variables>\n</user>\n")
}

// UserVariables are the channel variables the directory gives extension e's
// user, in order: what a call placed by that user carries (tenant, caller
// ids, toll_allow, ...). Callback calls set the same ones on their first
// leg, so the tenant's routes treat them as the user's own calls.
func UserVariables(snap *TenantSnapshot, e *Extension) [][2]string {
	t := &snap.Tenant
	vars := [][2]string{{"user_context", t.Tenant}, {"sb_tenant", t.Tenant}, {"sb_ext", e.Name}}
	add := func(k, v string) { vars = append(vars, [2]string{k, v}) }
	name, number := internalCallerID(e)
	add("effective_caller_id_name", name)
	add("effective_caller_id_number", number)
	if num := firstValid(validCallerNumber, e.OutboundCallerID, t.CallerID); num != "" {
		add("outbound_caller_id_number", num)
	}
	if n := sanitizeName(t.OutboundCallerIDName); n != "" {
		add("outbound_caller_id_name", n)
	}
	if num := snap.emergencyCallerID(e); num != "" {
		add("emergency_caller_id_number", num)
	}
	if validToken(e.AccountCode, "") {
		add("accountcode", e.AccountCode)
	}
	add("toll_allow", tollAllow(e.CallPermission))
	add("call_timeout", itoa(ringSeconds(e)))
	if lang := firstValid(validLanguage, e.Language, t.Language); lang != "" {
		add("default_language", lang)
	}
	if tz := firstValid(validZone, e.Timezone, t.Timezone); tz != "" {
		add("timezone", tz)
	}
	// FreeSWITCH plays the holding channel's hold_music to the other party.
	if moh := snap.holdMusic(e); moh != "" {
		add("hold_music", moh)
	}
	return vars
}

// writeMailboxUser renders a special mailbox: a user that can never register
// and has no password, only voicemail settings.
func writeMailboxUser(w *xmldoc.Writer, opts Options, snap *TenantSnapshot, m *SpecialMailbox) {
	t := &snap.Tenant
	w.Raw("<user")
	w.Attr("id", naming.VoicemailBox(t.Tenant, m.Number))
	w.Attr("cacheable", itoa(cacheMS(opts)))
	w.Raw(">\n<params>\n")
	w.Param("param", "sip-forbid-register", "true")
	w.Param("param", "allow-empty-password", "false")
	writeVoicemailParams(w, naming.VoicemailStorageDir(opts.MediaDir, t.Tenant, m.Number), true, m.PIN, m.Emails, m.AttachAudio, m.DeleteAfterEmail)
	w.Raw("</params>\n<variables>\n")
	w.Param("variable", "user_context", t.Tenant)
	w.Param("variable", "sb_tenant", t.Tenant)
	w.Param("variable", "sb_mailbox", m.Number)
	if lang := firstValid(validLanguage, m.Language, t.Language); lang != "" {
		w.Param("variable", "default_language", lang)
	}
	w.Raw("</variables>\n</user>\n")
}

// writeVoicemailParams renders a box's vm-* params. Without a valid PIN no
// vm-password is written, and the profile refuses empty passwords, so such a
// box can take messages but not be opened.
func writeVoicemailParams(w *xmldoc.Writer, storageDir string, enabled bool, pin string, emails []string, attach, deleteAfter bool) {
	if validPIN(pin) {
		w.Param("param", "vm-password", pin)
	}
	w.Param("param", "vm-enabled", boolStr(enabled))
	if storageDir != "" {
		w.Param("param", "vm-storage-dir", storageDir)
	}
	var valid []string
	for _, e := range emails {
		if validEmail(e) {
			valid = append(valid, e)
		}
	}
	if len(valid) > 0 {
		w.Param("param", "vm-mailto", strings.Join(valid, ","))
		w.Param("param", "vm-email-all-messages", "true")
		w.Param("param", "vm-attach-file", boolStr(attach))
		w.Param("param", "vm-keep-local-after-email", boolStr(!deleteAfter))
	}
}

func cacheMS(opts Options) int {
	if opts.UserCacheMS > 0 {
		return opts.UserCacheMS
	}
	return 60000
}

func ringSeconds(e *Extension) int {
	if e.RingSeconds < 5 || e.RingSeconds > 300 {
		return 30
	}
	return int(e.RingSeconds)
}

// internalCallerID splits the display form `"Name" <1001>`; the default is
// first and last name with the extension number. The name is sanitised
// (see sanitizeName), the number must be dialable.
func internalCallerID(e *Extension) (name, number string) {
	name, number = e.FirstName+" "+e.LastName, e.Name
	if cid := strings.TrimSpace(e.CallerID); strings.HasSuffix(cid, ">") {
		if lt := strings.LastIndexByte(cid, '<'); lt >= 0 {
			if n := cid[lt+1 : len(cid)-1]; validDialable(n) {
				number = n
				// "<1001>" alone keeps the first and last name: the API
				// leaves the display part empty when a name cannot be
				// written in it (quotes, angle brackets).
				if display := strings.Trim(strings.TrimSpace(cid[:lt]), `"`); display != "" {
					name = display
				}
			}
		}
	}
	name = sanitizeName(name)
	if name == "" {
		name = number
	}
	return name, number
}

// tollAllow lists what call_permission allows, lowest first; routes check
// for their min_permission in this list.
func tollAllow(permission string) string {
	switch permission {
	case "internal":
		return "internal"
	case "local":
		return "internal,local"
	case "international":
		return "internal,local,national,international"
	}
	return "internal,local,national"
}

func validZone(s string) bool { return validToken(s, "/+") }

func firstValid(ok func(string) bool, values ...string) string {
	for _, v := range values {
		if v != "" && ok(v) {
			return v
		}
	}
	return ""
}
