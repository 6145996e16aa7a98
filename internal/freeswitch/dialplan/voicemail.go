package dialplan

import (
	"slices"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// Message length limits. mod_voicemail (1.10) limits a recording only by
// its profile's max-record-len, which it accepts in 0-1000 seconds (a value
// outside falls back to its default); no directory param limits one box.
const (
	defaultRecordSeconds = 300
	minRecordSeconds     = 10
	maxRecordSeconds     = 1000
)

// RecordSeconds is the message length limit FreeSWITCH enforces for a
// special mailbox's max_message_seconds: unset is the default, longer than
// mod_voicemail accepts is its maximum.
func RecordSeconds(seconds int) int {
	switch {
	case seconds <= 0:
		return defaultRecordSeconds
	case seconds < minRecordSeconds:
		return minRecordSeconds
	case seconds > maxRecordSeconds:
		return maxRecordSeconds
	}
	return seconds
}

// VoicemailProfileFor names the profile that records messages of at most
// seconds: "default" for the default length, else "sb_len_<seconds>", one
// per distinct length (VoicemailConf renders them). Every profile shares
// the default profile's database, so a message left through one is found
// by *97/*98 ("check default"), vm_boxcount and message-waiting.
func VoicemailProfileFor(seconds int) string {
	s := RecordSeconds(seconds)
	if s == defaultRecordSeconds {
		return naming.VoicemailProfile
	}
	return "sb_len_" + itoa(s)
}

// voicemailDB is the default profile's own database name (mod_voicemail
// names it "voicemail_<profile>"), given to every profile.
const voicemailDB = "voicemail_" + naming.VoicemailProfile

// VoicemailConf renders voicemail.conf. mod_voicemail fetches it with no
// request data (at load and when a profile is first used), so it holds
// nothing of any tenant: the profiles' keys, limits and mail templates, and
// a storage-dir under the media library for boxes whose user lacks
// vm-storage-dir. allow-empty-password-auth is off: a box without a valid
// PIN cannot be opened (mod_voicemail's default lets an empty one in).
// messageSeconds are the special mailboxes' max_message_seconds (every
// tenant's); each distinct limit gets its own profile (VoicemailProfileFor),
// identical to the default but for max-record-len.
func VoicemailConf(opts Options, messageSeconds []int) []byte {
	lengths := []int{defaultRecordSeconds}
	for _, s := range messageSeconds {
		if s := RecordSeconds(s); s != defaultRecordSeconds {
			lengths = append(lengths, s)
		}
	}
	slices.Sort(lengths[1:])
	lengths = slices.Compact(lengths)
	w := xmldoc.NewWriter(2048 * len(lengths))
	w.Raw(xmldoc.DocOpen)
	w.Raw("<section name=\"configuration\">\n<configuration name=\"voicemail.conf\" description=\"Voicemail\">\n<settings>\n</settings>\n<profiles>\n")
	for _, seconds := range lengths {
		writeVoicemailProfile(w, opts, seconds)
	}
	w.Raw("</profiles>\n</configuration>\n")
	xmldoc.CloseSection(w)
	return w.Bytes()
}

// writeVoicemailProfile renders one profile whose messages last at most
// seconds.
func writeVoicemailProfile(w *xmldoc.Writer, opts Options, seconds int) {
	w.Raw("<profile")
	w.Attr("name", VoicemailProfileFor(seconds))
	w.Raw(">\n")
	w.Param("param", "dbname", voicemailDB)
	w.Param("param", "max-record-len", itoa(seconds))
	for _, p := range [][2]string{
		{"file-extension", "wav"},
		{"terminator-key", "#"},
		{"max-login-attempts", "3"},
		{"digit-timeout", "10000"},
		{"min-record-len", "3"},
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
		w.Param("param", p[0], p[1])
	}
	if dir, ok := naming.NodeMediaDir(opts.MediaDir); ok {
		w.Param("param", "storage-dir", dir+"/voicemail")
	}
	// The mail templates are the files FreeSWITCH ships in its conf
	// directory; the sender is the box's own address in the SIP domain.
	w.Raw("<email>\n")
	w.Param("param", "template-file", "voicemail.tpl")
	w.Param("param", "notify-template-file", "notify-voicemail.tpl")
	w.Param("param", "date-fmt", "%A, %B %d %Y, %I:%M %p")
	w.Param("param", "email-from", "${voicemail_account}@${voicemail_domain}")
	w.Raw("</email>\n</profile>\n")
}

// mailboxFullSound is what mod_voicemail itself plays when a box is over
// its quota (phrase voicemail_disk_quota_exceeded).
const mailboxFullSound = "voicemail/vm-mailbox_full.wav"

// mailboxExt renders a special mailbox's number: a caller leaves a message
// through the profile of the box's length limit, unless the box already
// holds max_messages (new plus saved, counted by mod_voicemail's
// vm_boxcount when the dialplan is built for the call): then the caller hears that the
// box is full. mod_voicemail has no per-box message count limit of its own
// (only vm-disk-quota, in seconds).
func (p *planner) mailboxExt(m *SpecialMailbox) *ext {
	box := naming.VoicemailBox(p.tenant, m.Number)
	max := m.MaxMessages
	if max <= 0 {
		max = 100
	}
	// vm_boxcount counts one kind per call ("all" is "new:saved:…", not a
	// sum); mod_expr (loaded by the deployment's modules.conf) adds them.
	boxcount := func(kind string) string {
		return "${vm_boxcount(" + naming.VoicemailProfile + "/" + box + "@" + p.opts.Domain + "|" + kind + ")}"
	}
	count := "${expr(" + boxcount("new") + "+" + boxcount("saved") + ")}"
	return &ext{name: "mailbox-" + m.Number, conds: []cond{
		{field: "destination_number", expr: numberExpr(m.Number)},
		{field: "${cond(" + count + " >= " + itoa(max) + " ? full : open)}", expr: "^open$",
			actions: []action{act("answer", ""), act("voicemail", VoicemailProfileFor(m.MaxMessageSeconds)+" "+p.opts.Domain+" "+box)},
			anti:    []action{act("answer", ""), act("playback", mailboxFullSound), act("hangup", "NORMAL_CLEARING")}},
	}}
}

// voicemailAnyPrompt asks for the box number on *98. The digits are read
// into our own variable with a pattern that admits digits only, and the box
// id is completed with this tenant, so a caller can reach only this
// tenant's boxes and nothing typed can form "${". After three tries without
// a valid number, play_and_get_digits' transfer_on_failure (its 11th
// argument, after digit_timeout; one quoted word, as mod_dptools splits
// at spaces) moves the call to the inline dialplan, which says goodbye and
// hangs up, so the voicemail action after it never runs with an empty box
// ("Can't find user [-<tenant>@...]" on FreeSWITCH 1.10.12).
const voicemailAnyPrompt = "2 10 3 5000 # voicemail/vm-enter_id.wav voicemail/vm-fail_auth.wav sb_vm_box ^[0-9]{2,10}$ 5000 " +
	"'playback:voicemail/vm-goodbye.wav,hangup:NORMAL_CLEARING inline'"

// voicemailAny renders *98: collect a box number, then check that box
// (mod_voicemail asks for its PIN).
func (p *planner) voicemailAny() []action {
	return []action{
		act("answer", ""),
		set("voicemail_callback_context", p.tenant),
		act("play_and_get_digits", voicemailAnyPrompt),
		act("voicemail", "check "+naming.VoicemailProfile+" "+p.opts.Domain+" ${sb_vm_box}-"+p.tenant),
	}
}
