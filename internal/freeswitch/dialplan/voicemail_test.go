package dialplan

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// TestVoicemailConfGolden: the one profile every box uses, with empty PINs
// refused and the storage under the nodes' media library.
func TestVoicemailConfGolden(t *testing.T) {
	doc := VoicemailConf(testOpts, nil)
	wellFormed(t, doc)
	golden(t, "voicemail.conf.xml", doc)
	tree := decodeTree(t, doc)
	if got := tree.find("profile", "name", naming.VoicemailProfile, "name"); len(got) != 1 {
		t.Fatalf("profiles named %q: %v", naming.VoicemailProfile, got)
	}
	for name, want := range map[string]string{
		"allow-empty-password-auth": "false",
		"storage-dir":               "/var/lib/switchboard/media/voicemail",
		"file-extension":            "wav",
	} {
		if got := tree.find("param", "name", name, "value"); len(got) != 1 || got[0] != want {
			t.Errorf("param %s = %v, want %s", name, got, want)
		}
	}
	// An unsafe media directory renders no storage-dir at all.
	for _, dir := range []string{"", "relative/dir", "/var/${x}", "/a b"} {
		opts := testOpts
		opts.MediaDir = dir
		if got := decodeTree(t, VoicemailConf(opts, nil)).find("param", "name", "storage-dir", "value"); len(got) != 0 {
			t.Errorf("media dir %q: storage-dir %v", dir, got)
		}
	}
}

// TestVoicemailStorageDirs: each box (extension or special mailbox) keeps its
// messages in its tenant's part of the media library.
func TestVoicemailStorageDirs(t *testing.T) {
	snap := loadSnap(t)
	for user, want := range map[string]string{
		"1001-acme": "/var/lib/switchboard/media/acme/voicemail/1001",
		"800-acme":  "/var/lib/switchboard/media/acme/voicemail/800",
	} {
		doc := Directory(testOpts, dirRequest(t, "009", "user", user), snap)
		if got := decodeTree(t, doc).find("param", "name", "vm-storage-dir", "value"); len(got) != 1 || got[0] != want {
			t.Errorf("%s: vm-storage-dir %v, want %s", user, got, want)
		}
	}
}

// TestVoicemailAnyReadsDigitsOnly: *98 collects the box number itself (the
// directory has no bare "1001" user) with a digits-only pattern, into our
// own variable, and completes it with this tenant.
func TestVoicemailAnyReadsDigitsOnly(t *testing.T) {
	doc, tr := TenantContext(testOpts, callRequest(t, "acme", "*98"), loadSnap(t), at(t, "2026-11-23 10:00"))
	if tr.Feature != "voicemail_any" {
		t.Fatalf("trace %+v", tr)
	}
	tree := decodeTree(t, doc)
	pg := tree.find("action", "application", "play_and_get_digits", "data")
	if len(pg) != 1 || !strings.Contains(pg[0], " sb_vm_box ^[0-9]{2,10}$ ") {
		t.Fatalf("play_and_get_digits %v", pg)
	}
	if vm := tree.find("action", "application", "voicemail", "data"); len(vm) != 1 || vm[0] != "check default sb.example ${sb_vm_box}-acme" {
		t.Fatalf("voicemail %v", vm)
	}
}

// TestDirectoryConfGolden: ten fixed profiles, one per minimum of search
// digits, transferring to the number alias.
func TestDirectoryConfGolden(t *testing.T) {
	doc := DirectoryConf()
	wellFormed(t, doc)
	golden(t, "directory.conf.xml", doc)
	tree := decodeTree(t, doc)
	if got := tree.find("profile", "name", "min-digits-2", "name"); len(got) != 1 {
		t.Fatalf("profile min-digits-2: %v", got)
	}
	if got := tree.find("param", "name", "use-number-alias", "value"); len(got) != 10 || got[0] != "true" {
		t.Fatalf("use-number-alias %v", got)
	}
}

// TestCompanyDirectoryDomain: the tenant's dial-by-name domain lists its
// enabled, listed extensions by name, numbers as number-alias, and carries
// no secret; the extension is announced only when both the tenant and the
// extension allow it.
func TestCompanyDirectoryDomain(t *testing.T) {
	req := dirRequest(t, "013", "user", "", "key", "", "key_value", "acme.directory.invalid", "domain", "")
	snap := loadSnap(t)
	doc := Directory(testOpts, req, snap)
	wellFormed(t, doc)
	golden(t, "dir_company_directory.xml", doc)
	tree := decodeTree(t, doc)
	if ids := tree.find("user", "", "", "id"); strings.Join(ids, ",") != "1001-acme,1002-acme" {
		t.Fatalf("users %v", ids)
	}
	if got := tree.find("user", "", "", "number-alias"); strings.Join(got, ",") != "1001,1002" {
		t.Fatalf("number-alias %v", got)
	}
	if got := tree.find("variable", "name", "directory_full_name", "value"); strings.Join(got, ",") != "Alice Smith,Bob Jones" {
		t.Fatalf("names %v", got)
	}
	if got := tree.find("param", "name", "directory-exten-visible", "value"); strings.Join(got, ",") != "true,false" {
		t.Fatalf("directory-exten-visible %v", got)
	}
	for _, secret := range []string{"a1-hash", "vm-password", "s3cret", "4321"} {
		if strings.Contains(string(doc), secret) {
			t.Errorf("directory domain carries %q", secret)
		}
	}

	t.Run("announce off", func(t *testing.T) {
		snap := loadSnap(t)
		snap.CompanyDirectory.AnnounceExtension = false
		if got := decodeTree(t, Directory(testOpts, req, snap)).find("param", "name", "directory-exten-visible", "value"); strings.Join(got, ",") != "false,false" {
			t.Fatalf("directory-exten-visible %v", got)
		}
	})
	t.Run("names cannot expand", func(t *testing.T) {
		snap := loadSnap(t)
		snap.Extensions[0].FirstName, snap.Extensions[0].LastName = "${system(id)}", "$${default_password}<&>"
		doc := Directory(testOpts, req, snap)
		wellFormed(t, doc)
		names := decodeTree(t, doc).find("variable", "name", "directory_full_name", "value")
		if len(names) != 2 || strings.Contains(names[0], "${") || strings.Contains(names[0], "$$") || !strings.Contains(names[0], "<&>") {
			t.Fatalf("names %q:\n%s", names, doc)
		}
	})
	t.Run("not found", func(t *testing.T) {
		cases := map[string]xmlcurl.Request{
			"other tenant": dirRequest(t, "013", "user", "", "key", "", "key_value", "globex.directory.invalid", "domain", ""),
			"user lookup":  dirRequest(t, "013", "user", "1001-acme", "key_value", "acme.directory.invalid", "domain", "acme.directory.invalid"),
			"sip_auth":     dirRequest(t, "009", "key_value", "acme.directory.invalid", "domain", "acme.directory.invalid"),
			"bad tenant":   dirRequest(t, "013", "user", "", "key", "", "key_value", "a-b.directory.invalid", "domain", ""),
			"suffix only":  dirRequest(t, "013", "user", "", "key", "", "key_value", ".directory.invalid", "domain", ""),
		}
		for name, r := range cases {
			if doc := Directory(testOpts, r, snap); !xmldoc.IsNotFound(doc) {
				t.Errorf("%s: got\n%s", name, doc)
			}
		}
		off := loadSnap(t)
		off.Tenant.Enabled = false
		if doc := Directory(testOpts, req, off); !xmldoc.IsNotFound(doc) {
			t.Errorf("disabled tenant: got\n%s", doc)
		}
	})
}

// TestVoicemailConfMessageLengths: each distinct special-mailbox length gets
// a profile with that max-record-len (clamped to what mod_voicemail accepts),
// every profile on the default profile's database.
func TestVoicemailConfMessageLengths(t *testing.T) {
	doc := VoicemailConf(testOpts, []int{120, 300, 3600, 120, 0})
	wellFormed(t, doc)
	golden(t, "voicemail_lengths.conf.xml", doc)
	tree := decodeTree(t, doc)
	if got := tree.find("profile", "", "", "name"); !slices.Equal(got, []string{"default", "sb_len_120", "sb_len_1000"}) {
		t.Fatalf("profiles %v", got)
	}
	if got := tree.find("param", "name", "max-record-len", "value"); !slices.Equal(got, []string{"300", "120", "1000"}) {
		t.Errorf("max-record-len %v", got)
	}
	if got := tree.find("param", "name", "dbname", "value"); !slices.Equal(got, []string{"voicemail_default", "voicemail_default", "voicemail_default"}) {
		t.Errorf("dbname %v", got)
	}
}

// TestSpecialMailboxLimits: the mailbox's number records through the
// profile of its length limit, and only while vm_boxcount is under
// max_messages; a full box plays mod_voicemail's "mailbox full" and hangs up.
func TestSpecialMailboxLimits(t *testing.T) {
	doc, tr := TenantContext(testOpts, callRequest(t, "acme", "800"), loadSnap(t), at(t, "2026-11-23 10:00"))
	if tr.Match != "special_mailbox" {
		t.Fatalf("trace %+v", tr)
	}
	tree := decodeTree(t, doc)
	box := "default/800-acme@" + testOpts.Domain
	want := "${cond(${expr(${vm_boxcount(" + box + "|new)}+${vm_boxcount(" + box + "|saved)})} >= 20 ? full : open)}"
	if got := tree.find("condition", "field", want, "expression"); !slices.Equal(got, []string{"^open$"}) {
		t.Fatalf("count condition %v in\n%s", got, doc)
	}
	if got := tree.find("action", "application", "voicemail", "data"); !slices.Equal(got, []string{"sb_len_120 " + testOpts.Domain + " 800-acme"}) {
		t.Errorf("voicemail %v", got)
	}
	if got := tree.find("anti-action", "application", "playback", "data"); !slices.Equal(got, []string{"voicemail/vm-mailbox_full.wav"}) {
		t.Errorf("full box %v", got)
	}
}

// TestVoicemailAnyEndsWithoutABox: when the caller gives no valid box
// number, play_and_get_digits' transfer_on_failure (its 11th argument, as
// mod_dptools splits them) ends the call through the inline dialplan with
// a goodbye, so voicemail never runs "check ... -<tenant>" (mod_voicemail:
// "Can't find user [-acme@...]").
func TestVoicemailAnyEndsWithoutABox(t *testing.T) {
	for _, number := range []string{"*98", "954"} {
		doc, _ := TenantContext(testOpts, callRequest(t, "acme", number), loadSnap(t), at(t, "2026-11-23 10:00"))
		pg := decodeTree(t, doc).find("action", "application", "play_and_get_digits", "data")
		if len(pg) != 1 {
			t.Fatalf("%s: play_and_get_digits %v", number, pg)
		}
		argv := fakefs.SeparateString(pg[0], ' ', 11)
		if len(argv) != 11 || argv[7] != "sb_vm_box" || argv[9] != "5000" {
			t.Fatalf("%s: play_and_get_digits arguments %q", number, argv)
		}
		target := fakefs.SeparateString(argv[10], ' ', 4)
		if len(target) != 2 || target[1] != "inline" ||
			target[0] != "playback:voicemail/vm-goodbye.wav,hangup:NORMAL_CLEARING" {
			t.Errorf("%s: transfer on failure %q", number, target)
		}
	}
}
