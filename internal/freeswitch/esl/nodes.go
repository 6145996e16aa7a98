package esl

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// DefaultPassword is FreeSWITCH's stock event socket password.
const DefaultPassword = "ClueCon"

// NodeConfig is one FreeSWITCH node's event socket.
type NodeConfig struct {
	// Name identifies the node in API calls, logs and leases.
	Name string
	// Addr is host:port of mod_event_socket.
	Addr     string
	Password string
}

// ParseNodes parses SWITCHBOARD_ESL_NODES: comma-separated entries, each
//
//	host:port
//	password@host:port
//	name=host:port
//	name=password@host:port
//
// The name defaults to host:port; a name may hold letters, digits, '.',
// '_' and '-'. The password is everything between "name=" (if any) and the
// last '@', so it may contain '@'; a password containing '=' needs the
// name= prefix. Entries without a password get defaultPassword, or
// "ClueCon" when that is empty. Blank entries are skipped; duplicate names
// are an error.
func ParseNodes(spec, defaultPassword string) ([]NodeConfig, error) {
	if defaultPassword == "" {
		defaultPassword = DefaultPassword
	}
	var out []NodeConfig
	seen := make(map[string]bool)
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		n, err := parseNode(entry, defaultPassword)
		if err != nil {
			return nil, err
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("parse esl nodes: duplicate node name %q", n.Name)
		}
		seen[n.Name] = true
		out = append(out, n)
	}
	return out, nil
}

func parseNode(entry, defaultPassword string) (NodeConfig, error) {
	n := NodeConfig{Password: defaultPassword}
	rest := entry
	if name, after, ok := strings.Cut(entry, "="); ok && validNodeName(name) {
		n.Name, rest = name, after
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		if i == 0 {
			return NodeConfig{}, fmt.Errorf("parse esl node %q: empty password", redact(entry))
		}
		n.Password, rest = rest[:i], rest[i+1:]
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil || host == "" {
		return NodeConfig{}, fmt.Errorf("parse esl node %q: want [name=][password@]host:port", redact(entry))
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return NodeConfig{}, fmt.Errorf("parse esl node %q: bad port %q", redact(entry), port)
	}
	n.Addr = net.JoinHostPort(host, port)
	if n.Name == "" {
		n.Name = n.Addr
	}
	return n, nil
}

func validNodeName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// redact hides the password part of an entry in error messages.
func redact(entry string) string {
	i := strings.LastIndex(entry, "@")
	if i < 0 {
		return entry
	}
	start := 0
	if name, _, ok := strings.Cut(entry, "="); ok && validNodeName(name) {
		start = len(name) + 1
	}
	return entry[:start] + "***" + entry[i:]
}
