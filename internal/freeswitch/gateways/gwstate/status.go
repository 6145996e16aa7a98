package gwstate

import (
	"fmt"
	"strconv"
	"strings"
)

// Held is one gateway as "sofia xmlstatus gateway" reports it: the fields
// the live state needs.
type Held struct {
	Name, Profile string
	// State is the sofia registration state (sofia_state_names: UNREGED,
	// TRYING, REGISTER, REGED, UNREGISTER, FAILED, FAIL_WAIT, EXPIRED,
	// NOREG, DOWN, TIMEOUT); Status the ping status (UP or DOWN).
	State, Status string
	// Uptime is <uptime-usec>: microseconds since the status went UP (0
	// while DOWN).
	Uptime int64
}

// ParseStatus reads the answer of "sofia xmlstatus gateway" (mod_sofia.c
// cmd_xml_status with one argument): an XML header line, "<gateways>",
// then per gateway of every running profile a block written by
// xml_gateway_status, one element a line, then "</gateways>". The lines
// are read rather than the XML: mod_sofia writes name, realm, username,
// to, proxy and context unescaped, so an odd value would make the document
// invalid; the lines read here (name, profile, state, status, uptime-usec)
// cannot break a line (parse_gateways checks names). A reply without
// "<gateways>" (an error, "-ERR ...") is an error.
func ParseStatus(reply string) ([]Held, error) {
	if !strings.Contains(reply, "<gateways>") {
		return nil, fmt.Errorf("gateway status: unexpected xmlstatus reply %q", firstLine(reply))
	}
	return parseBlocks(reply), nil
}

// ParseOne reads the answer of "sofia xmlstatus gateway <name>": the XML
// header and one <gateway> block, or "Invalid Gateway!" when no profile
// holds the gateway (found is false then).
func ParseOne(reply string) (h Held, found bool, err error) {
	if strings.HasPrefix(strings.TrimSpace(reply), "Invalid Gateway!") {
		return Held{}, false, nil
	}
	gws := parseBlocks(reply)
	if len(gws) != 1 {
		return Held{}, false, fmt.Errorf("gateway status: unexpected xmlstatus reply %q", firstLine(reply))
	}
	return gws[0], true, nil
}

// parseBlocks collects the <gateway> blocks of an xmlstatus answer.
func parseBlocks(reply string) []Held {
	var out []Held
	var cur *Held
	for _, line := range strings.Split(reply, "\n") {
		line = strings.TrimSpace(line)
		switch line {
		case "<gateway>":
			out = append(out, Held{})
			cur = &out[len(out)-1]
			continue
		case "</gateway>":
			cur = nil
			continue
		}
		if cur == nil {
			continue
		}
		tag, val, ok := element(line)
		if !ok {
			continue
		}
		switch tag {
		case "name":
			cur.Name = val
		case "profile":
			cur.Profile = val
		case "state":
			cur.State = val
		case "status":
			cur.Status = val
		case "uptime-usec":
			cur.Uptime, _ = strconv.ParseInt(val, 10, 64)
		}
	}
	// A block cut short (no name) is not a gateway.
	kept := out[:0]
	for _, h := range out {
		if h.Name != "" {
			kept = append(kept, h)
		}
	}
	return kept
}

// element splits "<tag>value</tag>".
func element(line string) (tag, val string, ok bool) {
	if !strings.HasPrefix(line, "<") {
		return "", "", false
	}
	end := strings.IndexByte(line, '>')
	if end < 2 {
		return "", "", false
	}
	tag = line[1:end]
	closing := "</" + tag + ">"
	if !strings.HasSuffix(line, closing) || len(line) < end+1+len(closing) {
		return "", "", false
	}
	return tag, line[end+1 : len(line)-len(closing)], true
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
