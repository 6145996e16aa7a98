package calls

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	tenantRe = regexp.MustCompile(`^[A-Za-z0-9_]{2,32}$`)
	idRe     = regexp.MustCompile(`^([A-Za-z0-9]+)/([0-9A-Za-z+*#._]+)-([A-Za-z0-9_]{2,32})?-([0-9a-f]{8})$`)
)

// reservedContexts are FreeSWITCH's own dialplan contexts, never tenants.
var reservedContexts = map[string]bool{"default": true, "public": true, "features": true}

// FormatID builds a channel identifier from its parts; seq is taken modulo 2^32.
func FormatID(tech, name, tenant string, seq uint64) string {
	return fmt.Sprintf("%s/%s-%s-%08x", tech, name, tenant, uint32(seq))
}

// ParseID splits a channel identifier <technology>/<name>-<tenant>-<sequence>
// into its parts. The tenant is empty for channels that belong to no tenant.
func ParseID(id string) (tech, name, tenant, seq string, err error) {
	m := idRe.FindStringSubmatch(id)
	if m == nil {
		return "", "", "", "", fmt.Errorf("parse channel id %q: invalid format", id)
	}
	return m[1], m[2], m[3], m[4], nil
}

// technology maps the endpoint of a FreeSWITCH channel name
// ("sofia/internal/1001@example.com") to the technology of a channel id.
func technology(channelName string) string {
	ep, _, _ := strings.Cut(channelName, "/")
	switch strings.ToLower(ep) {
	case "sofia", "":
		return "SIP"
	case "loopback":
		return "Local"
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(ep) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "SIP"
	}
	return b.String()
}

// cleanName keeps only the characters allowed in the name part of an id.
func cleanName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z',
			r == '+', r == '*', r == '#', r == '.', r == '_':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// channelUser returns the user part of a FreeSWITCH channel name:
// "sofia/internal/1001@example.com" gives "1001".
func channelUser(channelName string) string {
	s := channelName
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	s, _, _ = strings.Cut(s, "@")
	return s
}

// firstName returns the first candidate that is non-empty once cleaned, or
// "unknown".
func firstName(candidates ...string) string {
	for _, c := range candidates {
		if n := cleanName(c); n != "" {
			return n
		}
	}
	return "unknown"
}
