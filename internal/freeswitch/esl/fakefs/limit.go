package fakefs

import (
	"strconv"
	"strings"
)

// LimitUsageSubclass is the subclass of the CUSTOM event FreeSWITCH fires
// on every successful limit increment (LIMIT_EVENT_USAGE, switch_limit.h).
const LimitUsageSubclass = "limit::usage"

// limitHold is one mod_hash resource a channel counts in: released when
// the channel hangs up (mod_hash's state handler), or when the application
// run under limit_execute returns.
type limitHold struct{ realm, resource string }

// hashKey is mod_hash's key of a resource: "<realm>_<resource>".
func (h limitHold) hashKey() string { return h.realm + "_" + h.resource }

// LimitUsage is the usage mod_hash counts on this node for realm and
// resource ("limit_usage hash <realm> <resource>").
func (s *Server) LimitUsage(realm, resource string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limits[limitHold{realm, resource}.hashKey()]
}

// FireLimitUsage fires a limit::usage event exactly as
// switch_limit_fire_event formats it: backend, realm, key, usage, rate,
// max and ratemax after the standard block and Event-Subclass; no channel
// data. A negative max (no maximum, a counter) is sent as -1 with ratemax
// 0, as mod_hash does. It lets a test report a usage the fake's own
// dialplan did not count; limit and limit_execute fire it by themselves.
func (s *Server) FireLimitUsage(realm, key string, usage, rate, max int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fireLimitUsageLocked(realm, key, usage, rate, max)
}

func (s *Server) fireLimitUsageLocked(realm, key string, usage, rate, max int) {
	if !s.anyWantsLocked("CUSTOM") {
		s.seq++
		return
	}
	ratemax := 0
	if max >= 0 {
		ratemax = max
	}
	h := s.stdHeadersLocked("CUSTOM")
	for i := range h {
		switch h[i].Name {
		case "Event-Calling-File":
			h[i].Value = "switch_limit.c"
		case "Event-Calling-Function":
			h[i].Value = "switch_limit_fire_event"
		}
	}
	h = append(h,
		Header{"Event-Subclass", LimitUsageSubclass},
		Header{"backend", "hash"},
		Header{"realm", realm},
		Header{"key", key},
		Header{"usage", strconv.Itoa(usage)},
		Header{"rate", strconv.Itoa(rate)},
		Header{"max", strconv.Itoa(max)},
		Header{"ratemax", strconv.Itoa(ratemax)},
	)
	s.deliverLocked("CUSTOM", h, "")
}

// limitIncr is mod_hash's limit_incr_hash for channel id without an
// interval: a channel already counted in the resource is not counted again
// (and fires nothing); otherwise the usage goes up by one unless it would
// pass max (max < 0: no maximum), and the increment fires limit::usage
// with the usage after it. An attempt over the maximum fires nothing: it
// only fails.
func (s *Server) limitIncr(id string, hold limitHold, max int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return false
	}
	for _, h := range c.limits {
		if h == hold {
			return true
		}
	}
	key := hold.hashKey()
	if max >= 0 && s.limits[key]+1 > max {
		return false
	}
	if s.limits == nil {
		s.limits = map[string]int{}
	}
	s.limits[key]++
	c.limits = append(c.limits, hold)
	usage := strconv.Itoa(s.limits[key])
	c.setVar("limit_usage", usage)
	c.setVar("limit_usage_"+key, usage)
	s.fireLimitUsageLocked(hold.realm, hold.resource, s.limits[key], 0, max)
	return true
}

// limitRelease takes channel id out of one resource (limit_execute's
// release after its application returns).
func (s *Server) limitRelease(id string, hold limitHold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.channels[id]; ok {
		for i, h := range c.limits {
			if h == hold {
				c.limits = append(c.limits[:i], c.limits[i+1:]...)
				s.releaseLocked(h)
				return
			}
		}
	}
}

// releaseLimitsLocked takes a hung-up channel out of every resource it
// counts in. Caller holds s.mu.
func (s *Server) releaseLimitsLocked(c *Channel) {
	for _, h := range c.limits {
		s.releaseLocked(h)
	}
	c.limits = nil
}

func (s *Server) releaseLocked(h limitHold) {
	key := h.hashKey()
	if s.limits[key] <= 1 {
		delete(s.limits, key)
		return
	}
	s.limits[key]--
}

// limitArgs parses "<backend> <realm> <resource> <max>[/<interval>] ..."
// into at most n words (the last keeps the rest, as
// switch_separate_string does), and max as mod_dptools reads it: "-..." is
// no maximum (-1), a number below 0 is 0.
func limitArgs(data string, n int) (argv []string, hold limitHold, max int, ok bool) {
	argv = separate(data, n)
	if len(argv) < 3 {
		return nil, limitHold{}, 0, false
	}
	hold = limitHold{argv[1], argv[2]}
	max = -1
	if len(argv) > 3 && !strings.HasPrefix(argv[3], "-") {
		m, _, _ := strings.Cut(argv[3], "/") // rate limits (intervals) are not modelled
		max, _ = strconv.Atoi(m)
		max = maxInt(max, 0)
	}
	return argv, hold, max, true
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// separate splits s on spaces into at most n words, the last holding the
// rest of s.
func separate(s string, n int) []string {
	var out []string
	s = strings.TrimLeft(s, " ")
	for s != "" && len(out) < n-1 {
		w, rest, found := strings.Cut(s, " ")
		out = append(out, w)
		if !found {
			return out
		}
		s = strings.TrimLeft(rest, " ")
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// runLimit runs the limit application on channel id: over the maximum,
// "!CAUSE" hangs up with CAUSE; a transfer target (the default is
// limit_exceeded) is not modelled and ends the call with
// NO_ROUTE_DESTINATION. Only the hash backend is modelled; any other
// fails as an unknown backend does.
func (s *Server) runLimit(id, data string) (cause string) {
	argv, hold, max, ok := limitArgs(data, 7)
	if !ok {
		return ""
	}
	if argv[0] == "hash" && s.limitIncr(id, hold, max) {
		return ""
	}
	if len(argv) > 4 && strings.HasPrefix(argv[4], "!") {
		return argv[4][1:]
	}
	return "NO_ROUTE_DESTINATION"
}
