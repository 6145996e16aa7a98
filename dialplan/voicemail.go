package dialplan

import "strings"

// VoicemailProfile is the one mod_voicemail profile every tenant uses: the
// dialplan runs "voicemail default <domain> <box>-<tenant>" (resources.md
// §0), and what differs per tenant or box (storage, PIN, mail) travels in
// the directory user's vm-* params.
const VoicemailProfile = "default"

// VoicemailConf renders voicemail.conf. mod_voicemail fetches it with no
// request data (at load and when a profile is first used), so it holds
// nothing of any tenant: the profile's keys, limits and mail templates, and
// a storage-dir under the media library for boxes whose user lacks
// vm-storage-dir. allow-empty-password-auth is off: a box without a valid
// PIN cannot be opened (mod_voicemail's default lets an empty one in).
func VoicemailConf(opts Options) []byte {
	w := newXW(2048)
	w.raw(docOpen)
	w.raw("<section name=\"configuration\">\n<configuration name=\"voicemail.conf\" description=\"Voicemail\">\n<settings>\n</settings>\n<profiles>\n<profile")
	w.attr("name", VoicemailProfile)
	w.raw(">\n")
	for _, p := range [][2]string{
		{"file-extension", "wav"},
		{"terminator-key", "#"},
		{"max-login-attempts", "3"},
		{"digit-timeout", "10000"},
		{"min-record-len", "3"},
		{"max-record-len", "300"},
		{"max-retries", "3"},
		{"tone-spec", "%(1000, 0, 640)"},
		{"callback-dialplan", "XML"},
		// Calling a message's sender back runs in the caller's tenant
		// context (voicemail_callback_context, set where a box is
		// checked); this profile-wide fallback names no context.
		{"callback-context", "switchboard-no-callback"},
		{"record-silence-threshold", "200"},
		{"record-silence-hits", "2"},
		{"allow-empty-password-auth", "false"},
		{"db-password-override", "false"},
		{"play-new-messages-lifo", "false"},
		{"play-saved-messages-lifo", "false"},
	} {
		w.param("param", p[0], p[1])
	}
	if dir, ok := nodeMediaDir(opts); ok {
		w.param("param", "storage-dir", dir+"/voicemail")
	}
	// The mail templates are the files FreeSWITCH ships in its conf
	// directory; the sender is the box's own address in the SIP domain.
	w.raw("<email>\n")
	w.param("param", "template-file", "voicemail.tpl")
	w.param("param", "notify-template-file", "notify-voicemail.tpl")
	w.param("param", "date-fmt", "%A, %B %d %Y, %I:%M %p")
	w.param("param", "email-from", "${voicemail_account}@${voicemail_domain}")
	w.raw("</email>\n</profile>\n</profiles>\n</configuration>\n")
	closeSection(w)
	return w.bytes()
}

// VoicemailStorageDir is where FreeSWITCH keeps box's messages and
// greetings: <MediaDir>/<tenant>/voicemail/<box> on the nodes (the media
// library, so imports written by Switchboard are where the nodes read
// them). "" when the media directory or a part is not safe in a path.
func VoicemailStorageDir(opts Options, tenant, box string) string {
	dir, ok := nodeMediaDir(opts)
	if !ok || !validTenant(tenant) || !validNumber(box) {
		return ""
	}
	return dir + "/" + tenant + "/voicemail/" + box
}

// nodeMediaDir is opts.MediaDir without a trailing slash when it is an
// absolute path of safe tokens.
func nodeMediaDir(opts Options) (string, bool) {
	dir := strings.TrimRight(opts.MediaDir, "/")
	if !strings.HasPrefix(dir, "/") || !validToken(strings.ReplaceAll(dir[1:], "/", "_"), "") {
		return "", false
	}
	return dir, true
}

// VoicemailBox is the mod_voicemail box id ("<number>-<tenant>", the
// directory user) of an extension or special mailbox.
func VoicemailBox(tenant, number string) string { return number + "-" + tenant }

// voicemailAnyPrompt asks for the box number on *98. The digits are read
// into our own variable with a pattern that admits digits only, and the box
// id is completed with this tenant, so a caller can reach only this
// tenant's boxes and nothing typed can form "${".
const voicemailAnyPrompt = "2 10 3 5000 # voicemail/vm-enter_id.wav voicemail/vm-fail_auth.wav sb_vm_box ^[0-9]{2,10}$"

// voicemailAny renders *98: collect a box number, then check that box
// (mod_voicemail asks for its PIN).
func (p *planner) voicemailAny() []action {
	return []action{
		act("answer", ""),
		set("voicemail_callback_context", p.tenant),
		act("play_and_get_digits", voicemailAnyPrompt),
		act("voicemail", "check "+VoicemailProfile+" "+p.opts.Domain+" ${sb_vm_box}-"+p.tenant),
	}
}
