package naming

import "strings"

// Paths on the nodes below the media library (the media directory as the
// nodes mount it), where Switchboard writes imports and nodes write what
// they record.

// NodeMediaDir is mediaDir without a trailing slash when it is an absolute
// path of safe tokens (letters, digits, '.', '_', '-'), the only kind
// rendered as a node directory.
func NodeMediaDir(mediaDir string) (string, bool) {
	dir := strings.TrimRight(mediaDir, "/")
	if !strings.HasPrefix(dir, "/") || !safeSegments(strings.ReplaceAll(dir[1:], "/", "_")) {
		return "", false
	}
	return dir, true
}

// VoicemailProfile is the one mod_voicemail profile every tenant uses: the
// dialplan runs "voicemail default <domain> <box>-<tenant>" (resources.md
// §0), and what differs per tenant or box (storage, PIN, mail) travels in
// the directory user's vm-* params.
const VoicemailProfile = "default"

// VoicemailBox is the mod_voicemail box id ("<number>-<tenant>", the
// directory user) of an extension or special mailbox.
func VoicemailBox(tenant, number string) string { return number + "-" + tenant }

// VoicemailStorageDir is where FreeSWITCH keeps box's messages and
// greetings: <mediaDir>/<tenant>/voicemail/<box> on the nodes (the media
// library, so imports written by Switchboard are where the nodes read
// them). "" when the media directory or a part is not safe in a path.
func VoicemailStorageDir(mediaDir, tenant, box string) string {
	dir, ok := NodeMediaDir(mediaDir)
	if !ok || !ValidTenant(tenant) || !ValidNumber(box) {
		return ""
	}
	return dir + "/" + tenant + "/voicemail/" + box
}

// PhoneRecordingKind is the directory below a tenant's media library where
// nodes write prompts recorded by phone (*732), one <call uuid>.wav each;
// package features reads them from there (its PhoneRecordingRel).
const PhoneRecordingKind = "phone"

// PhoneRecordingDir is where a node writes tenant's phone-recorded
// prompts: <mediaDir>/<tenant>/phone, or "" when the media directory or
// the tenant is not safe in a path.
func PhoneRecordingDir(mediaDir, tenant string) string {
	dir, ok := NodeMediaDir(mediaDir)
	if !ok || !ValidTenant(tenant) {
		return ""
	}
	return dir + "/" + tenant + "/" + PhoneRecordingKind
}
