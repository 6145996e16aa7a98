package dialplan

import (
	"strings"
	"unicode/utf8"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// Whitelists for values that end up in dialplan action data, dial strings or
// channel variables. FreeSWITCH expands "${...}" in those at run time (and
// runs API commands through it), and dial strings give meaning to {}[]<>,|
// and spaces, so escaping cannot make arbitrary text safe there: values are
// checked against these byte-level whitelists and skipped when they fail.
// Hand-written loops instead of regexp keep renders allocation-free.

// validTenant matches ^[A-Za-z0-9_]{2,32}$ (naming.ValidTenant: the tenant
// part of every name).
func validTenant(s string) bool { return naming.ValidTenant(s) }

// validNumber matches ^[0-9]{2,10}$ (naming.ValidNumber: extensions and
// other number-plan objects).
func validNumber(s string) bool { return naming.ValidNumber(s) }

// validDialable matches ^[0-9+*#]{1,32}$.
func validDialable(s string) bool {
	return len(s) >= 1 && len(s) <= 32 && allIn(s, "0123456789+*#")
}

// validCallerNumber matches ^\+?[0-9]{3,15}$.
func validCallerNumber(s string) bool {
	d := strings.TrimPrefix(s, "+")
	return len(d) >= 3 && len(d) <= 15 && allIn(d, "0123456789")
}

// validToken matches ^[A-Za-z0-9_.-]{1,64}$: trunk names, account codes,
// prompt file names, IANA zone names (plus '/' and '+').
func validToken(s string, extra string) bool {
	if len(s) < 1 || len(s) > 64 || strings.HasPrefix(s, ".") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// validHost matches a host name or IPv4/IPv6 literal: [A-Za-z0-9.:-], 1-253
// (naming.ValidHost).
func validHost(s string) bool { return naming.ValidHost(s) }

// validLanguage matches ^[a-z]{2}(-[A-Z]{2})?$.
func validLanguage(s string) bool {
	switch len(s) {
	case 2:
		return allIn(s, "abcdefghijklmnopqrstuvwxyz")
	case 5:
		return allIn(s[:2], "abcdefghijklmnopqrstuvwxyz") && s[2] == '-' && allIn(s[3:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	}
	return false
}

// validPIN matches ^[0-9]{4,10}$.
func validPIN(s string) bool { return len(s) >= 4 && len(s) <= 10 && allIn(s, "0123456789") }

// validEmail is a loose address check that also refuses anything FreeSWITCH
// could expand or split on: mod_voicemail expands its mail settings.
func validEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at < 1 || at == len(s)-1 || len(s) > 254 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("${}\\<>\"',;|[]^()", c) >= 0 {
			return false
		}
	}
	return true
}

func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// sanitizeName neutralises a display name for channel variables such as
// effective_caller_id_name. Those values are expanded again whenever a
// dialplan references them, so "${system(id)}" in a first name would run an
// API command at call time. The API refuses "${" in such fields at input;
// this is the second line, for rows written before validation. Control
// characters and invalid UTF-8 go, whitespace runs collapse, at most 64 bytes
// remain; then, as the very last step so that no earlier removal can join a
// '$' to a '{' (the "$<DEL>{" attack), every '$' that starts "${" or "$$" is
// dropped. Everything else (quotes, angle brackets, ampersands) is kept: XML
// escaping carries it intact, and these values never enter a dial string.
func sanitizeName(s string) string {
	return neutraliseExpansion(cleanDisplay(s, ""))
}

// sanitizeCallerName is sanitizeName for text a caller controls (the SIP
// From display name): there '$', '{', '}' and '\' are removed outright, so
// the value holds nothing FreeSWITCH could ever expand, however it is later
// joined or substituted.
func sanitizeCallerName(s string) string {
	return neutraliseExpansion(cleanDisplay(s, "${}\\"))
}

// cleanDisplay drops control characters, invalid UTF-8 and the bytes in drop,
// collapses whitespace and caps the result at 64 bytes on a rune boundary.
func cleanDisplay(s, drop string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError, r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r < utf8.RuneSelf && strings.IndexByte(drop, byte(r)) >= 0:
			continue
		}
		b.WriteRune(r)
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	if len(out) > 64 {
		cut := 64
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = strings.TrimSpace(out[:cut])
	}
	return out
}

// neutraliseExpansion drops every '$' followed by '{' or '$'. A kept '$' is
// followed by a byte that is kept too, so the result holds neither "${" nor
// "$$": one pass is enough.
func neutraliseExpansion(s string) string {
	if strings.IndexByte(s, '$') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '$' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '$') {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
