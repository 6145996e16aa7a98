package naming

import "strings"

// The parts every name is built of. Tenant names hold letters, digits and
// '_' only (never '-', '@' or '.'), and numbers are digits, so a name
// splits unambiguously at the separator its builder put in.

// ValidTenant matches ^[A-Za-z0-9_]{2,32}$, a tenant name.
func ValidTenant(s string) bool {
	if len(s) < 2 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ValidNumber matches ^[0-9]{2,10}$ (extensions and other number-plan objects).
func ValidNumber(s string) bool {
	return len(s) >= 2 && len(s) <= 10 && allIn(s, "0123456789")
}

func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// safeSegments reports whether s, a path's segments joined by '_', matches
// ^[A-Za-z0-9_.-]{1,64}$ without a leading '.'.
func safeSegments(s string) bool {
	if len(s) < 1 || len(s) > 64 || strings.HasPrefix(s, ".") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// ValidHost matches a host name or IPv4/IPv6 literal: [A-Za-z0-9.:-],
// 1-253 bytes; the domain after '@' in a name and a gateway's proxy.
func ValidHost(s string) bool {
	if len(s) < 1 || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

// ValidGatewayName matches ^[a-z0-9_]{1,40}$: a SIP trunk's name, which is
// its sofia gateway's name in sofia.conf and in the sofia/gateway/<name>/
// dial strings of outbound routes.
func ValidGatewayName(s string) bool {
	return len(s) >= 1 && len(s) <= 40 && allIn(s, "abcdefghijklmnopqrstuvwxyz0123456789_")
}
