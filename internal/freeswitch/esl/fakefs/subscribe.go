package fakefs

import (
	"sort"
	"strings"
)

// subscribe handles "event [plain|json|xml] <names...>".
func (c *conn) subscribe(args string) string {
	f := strings.Fields(args)
	format := "plain"
	if len(f) > 0 {
		switch strings.ToLower(f[0]) {
		case "plain", "json", "xml":
			format = strings.ToLower(f[0])
			f = f[1:]
		}
	}
	if format == "xml" {
		// Not modelled: eslgo cannot parse XML events either.
		return "-ERR fakefs does not serve xml events"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	custom := false
	for _, name := range f {
		if !validEventName(name) {
			continue
		}
		n++
		switch {
		case custom:
			// After CUSTOM every word is a subclass name.
			c.subclasses[name] = true
		case strings.EqualFold(name, "all"):
			c.all = true
		default:
			custom = strings.EqualFold(name, "CUSTOM")
			c.events[strings.ToUpper(name)] = true
		}
	}
	if n == 0 {
		return "-ERR no keywords supplied"
	}
	c.format = format
	return "+OK event listener enabled " + format
}

func validEventName(name string) bool {
	for _, r := range name {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == ':') {
			return false
		}
	}
	return name != ""
}

func (c *conn) nix(args string) string {
	f := strings.Fields(args)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, name := range f {
		if !validEventName(name) {
			continue
		}
		n++
		if strings.EqualFold(name, "all") {
			c.all = false
			clear(c.events)
			continue
		}
		c.events[strings.ToUpper(name)] = false
	}
	if n == 0 {
		return "-ERR no keywords supplied"
	}
	return "+OK events nixed"
}

func (c *conn) noEvents() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.format == "" {
		return "-ERR not listening for events"
	}
	c.format = ""
	c.all = false
	clear(c.events)
	return "+OK no longer listening for events"
}

// filter handles "filter <header> <value>", "filter delete <header> [value]"
// and "filter delete all". Values compare case-insensitively; regex and
// exclusion filters are not modelled.
func (c *conn) filter(args string) string {
	f := strings.SplitN(args, " ", 3)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(f) >= 2 && strings.EqualFold(f[0], "delete") {
		if strings.EqualFold(f[1], "all") {
			c.filters = nil
			return "+OK filter deleted. [all][]"
		}
		val := ""
		if len(f) == 3 {
			val = f[2]
		}
		kept := c.filters[:0]
		for _, h := range c.filters {
			if !(strings.EqualFold(h.Name, f[1]) && (val == "" || strings.EqualFold(h.Value, val))) {
				kept = append(kept, h)
			}
		}
		c.filters = kept
		return "+OK filter deleted. [" + f[1] + "][" + val + "]"
	}
	if len(f) < 2 {
		return "-ERR invalid syntax"
	}
	val := strings.Join(f[1:], " ")
	c.filters = append(c.filters, Header{f[0], val})
	return "+OK filter added. [" + f[0] + "]=[" + val + "]"
}

// wants reports whether the connection gets event name with these headers,
// and in which format.
func (c *conn) wants(name string, headers []Header) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.authed || c.format == "" {
		return "", false
	}
	sub, set := c.events[name]
	if !(sub || (c.all && !set)) {
		return "", false
	}
	if name == "CUSTOM" && !c.all {
		// A subclassed custom event goes only to those who named its
		// subclass.
		for _, h := range headers {
			if h.Name == "Event-Subclass" && !c.subclasses[h.Value] {
				return "", false
			}
		}
	}
	if len(c.filters) > 0 && !matchFilters(c.filters, headers) {
		return "", false
	}
	return c.format, true
}

// subscribed reports whether the connection takes event name at all,
// filters not considered.
func (c *conn) subscribed(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.authed || c.format == "" {
		return false
	}
	sub, set := c.events[name]
	return sub || (c.all && !set)
}

func matchFilters(filters, headers []Header) bool {
	for _, f := range filters {
		for _, h := range headers {
			if strings.EqualFold(f.Name, h.Name) && strings.EqualFold(f.Value, h.Value) {
				return true
			}
		}
	}
	return false
}

func (c *conn) info() ConnInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	ci := ConnInfo{ID: c.id, Remote: c.nc.RemoteAddr().String(), Authed: c.authed, Format: c.format}
	if c.all {
		ci.Events = append(ci.Events, "ALL")
	}
	for name, on := range c.events {
		if on {
			ci.Events = append(ci.Events, name)
		}
	}
	sort.Strings(ci.Events)
	return ci
}
