package naming

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
)

// UserID is the directory user id of tenant's extension ext,
// "<extension>-<tenant>" (for example "1001-acme"): what phones register
// as and what user/<id>@<domain> dials.
func UserID(tenant, ext string) string { return ext + "-" + tenant }

// SplitUserID splits a directory user id "<extension>-<tenant>" (for example
// "1001-acme") into its parts. Tenant names contain no hyphen, so the split is
// at the last '-'; both parts must pass their whitelists.
func SplitUserID(id string) (ext, tenant string, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return "", "", false
	}
	ext, tenant = id[:i], id[i+1:]
	if !ValidNumber(ext) || !ValidTenant(tenant) {
		return "", "", false
	}
	return ext, tenant, true
}

// A1Hash is the digest hash of a user's password as the directory's
// a1-hash param carries it: md5("<user>:<realm>:<password>") in lowercase
// hex, which FreeSWITCH compares with the digest response.
func A1Hash(user, realm, password string) string {
	sum := md5.Sum([]byte(user + ":" + realm + ":" + password))
	return hex.EncodeToString(sum[:])
}

// A webrtc click-to-call widget gives each visitor's browser a short-lived
// directory user (resources.md §2.21) whose user_context is the widget's
// own dialplan context.

// widgetUserPrefix starts the token part of a widget user id
// "w<token>-<tenant>". An extension user's part is digits only, so the two
// never collide.
const widgetUserPrefix = "w"

// widgetContextPrefix starts a widget's context name "widget-<public_id>".
// Tenant names (the tenant contexts) hold no hyphen, so no tenant can own a
// context of this name.
const widgetContextPrefix = "widget-"

// WidgetUserID is the directory user id of a widget visitor: token is
// random lower-case hex.
func WidgetUserID(token, tenant string) string {
	return widgetUserPrefix + token + "-" + tenant
}

// SplitWidgetUserID answers the tenant of a widget user id, and false for
// any other id.
func SplitWidgetUserID(id string) (tenant string, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 || !strings.HasPrefix(id, widgetUserPrefix) {
		return "", false
	}
	token := id[len(widgetUserPrefix):i]
	if len(token) < 16 || len(token) > 40 || !allIn(token, "0123456789abcdef") || !ValidTenant(id[i+1:]) {
		return "", false
	}
	return id[i+1:], true
}

// WidgetContext is the dialplan context of the widget with this public id.
func WidgetContext(publicID string) string { return widgetContextPrefix + publicID }

// WidgetPublicID answers the public id a widget context names, and false
// for any other context.
func WidgetPublicID(context string) (string, bool) {
	id, ok := strings.CutPrefix(context, widgetContextPrefix)
	if !ok || len(id) < 8 || len(id) > 64 || !allIn(id, "abcdefghijklmnopqrstuvwxyz0123456789") {
		return "", false
	}
	return id, true
}

// Dial-by-name (mod_directory, resources.md §2.16) reads a tenant's names
// from a domain of its own under the reserved ".invalid" top-level domain
// (RFC 2606: never a real host, so no SIP request can name it).

// directoryDomainSuffix ends every tenant's dial-by-name domain.
const directoryDomainSuffix = ".directory.invalid"

// DirectoryDomain is the domain tenant's dial-by-name reads its names from.
func DirectoryDomain(tenant string) string { return tenant + directoryDomainSuffix }

// DirectoryDomainTenant is the tenant of a dial-by-name domain.
func DirectoryDomainTenant(domain string) (string, bool) {
	if len(domain) <= len(directoryDomainSuffix) || !strings.EqualFold(domain[len(domain)-len(directoryDomainSuffix):], directoryDomainSuffix) {
		return "", false
	}
	t := domain[:len(domain)-len(directoryDomainSuffix)]
	return t, ValidTenant(t)
}
