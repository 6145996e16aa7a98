package fakefs

import (
	"cmp"
	"context"
	"encoding/xml"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The fake's mod_callcenter: the callcenter_config API with the state it
// keeps (loaded queues, agents, tiers), answering as mod_callcenter.c does
// ("+OK\n" or its "-ERR ...!\n" texts, checked in the order it checks). A
// queue is loaded the way the module loads one: by fetching callcenter.conf
// with CC-Queue=<name> from the mod_xml_curl URL and finding the queue in
// the answer; without that URL no queue can be loaded.

// CCAgent is an agent as mod_callcenter holds it.
type CCAgent struct {
	Name, Type, Status, State, Contact string
	// Settings holds every other "agent set" key (max_no_answer,
	// wrap_up_time, ...) with the value last set.
	Settings map[string]string
}

// CCTier joins an agent to a queue.
type CCTier struct {
	Queue, Agent    string
	Level, Position int
}

type callcenter struct {
	queues map[string]map[string]string // name -> params
	agents map[string]*CCAgent
	tiers  []CCTier
}

var ccStatuses = []string{"Logged Out", "Available", "Available (On Demand)", "On Break"}
var ccStates = []string{"Waiting", "Receiving", "In a queue call", "Idle"}
var ccTierStates = []string{"No Answer", "Ready", "Offering", "Active Inbound", "Standby"}

// CallcenterAgent returns the named agent.
func (s *Server) CallcenterAgent(name string) (CCAgent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.cc.agents[name]
	if !ok {
		return CCAgent{}, false
	}
	c := *a
	c.Settings = map[string]string{}
	for k, v := range a.Settings {
		c.Settings[k] = v
	}
	return c, true
}

// CallcenterTiers returns every tier, in the order they were added.
func (s *Server) CallcenterTiers() []CCTier {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cc.tiers)
}

// CallcenterQueue returns a loaded queue's parameters.
func (s *Server) CallcenterQueue(name string) (map[string]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.cc.queues[name]
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	for k, v := range q {
		out[k] = v
	}
	return out, true
}

func foldIn(list []string, v string) (string, bool) {
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return s, true
		}
	}
	return "", false
}

func (s *Server) callcenterConfig(args string) string {
	if strings.TrimSpace(args) == "" {
		return "-USAGE: callcenter_config <target> <args>\n"
	}
	argv := splitBlank(args, 8)
	if len(argv) < 2 {
		return "-ERR Invalid!\n"
	}
	section, action, rest := strings.ToLower(argv[0]), strings.ToLower(argv[1]), argv[2:]
	if action == "list" && len(rest) == 0 {
		return s.ccList(section)
	}
	if section == "queue" {
		return s.ccQueue(action, rest)
	}
	if section == "tier" && action == "add" && len(rest) >= 4 {
		// get_queue: a queue not loaded yet is loaded from XML first.
		if s.ccQueue("load", rest[:1]) != "+OK\n" {
			return "-ERR Queue not found!\n"
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cc.agents == nil {
		s.cc.agents = map[string]*CCAgent{}
	}
	switch section + " " + action {
	case "agent add":
		if len(rest) < 2 {
			return "-ERR Invalid!\n"
		}
		if !strings.EqualFold(rest[1], "callback") && !strings.EqualFold(rest[1], "uuid-standby") {
			return "-ERR Agent type invalid!\n"
		}
		if _, ok := s.cc.agents[rest[0]]; ok {
			return "-ERR Agent already exist!\n"
		}
		s.cc.agents[rest[0]] = &CCAgent{Name: rest[0], Type: rest[1], Status: "Logged Out", State: "Waiting", Settings: map[string]string{}}
		return "+OK\n"
	case "agent del":
		if len(rest) < 1 {
			return "-ERR Invalid!\n"
		}
		delete(s.cc.agents, rest[0])
		s.cc.tiers = slices.DeleteFunc(s.cc.tiers, func(t CCTier) bool { return t.Agent == rest[0] })
		return "+OK\n"
	case "agent set":
		if len(rest) < 3 {
			return "-ERR Invalid!\n"
		}
		return s.ccAgentSetLocked(strings.ToLower(rest[0]), rest[1], rest[2])
	case "agent get":
		if len(rest) < 2 {
			return "-ERR Invalid!\n"
		}
		a, ok := s.cc.agents[rest[1]]
		if !ok {
			return "-ERR Agent not found!\n"
		}
		if !strings.EqualFold(rest[0], "status") {
			return "-ERR Invalid Agent Update KEY!\n"
		}
		return a.Status
	case "tier add":
		if len(rest) < 4 {
			return "-ERR Invalid!\n"
		}
		return s.ccTierAddLocked(rest[0], rest[1], rest[2], rest[3])
	case "tier set":
		if len(rest) < 4 {
			return "-ERR Invalid!\n"
		}
		return s.ccTierSetLocked(strings.ToLower(rest[0]), rest[1], rest[2], rest[3])
	case "tier del":
		if len(rest) < 2 {
			return "-ERR Invalid!\n"
		}
		s.cc.tiers = slices.DeleteFunc(s.cc.tiers, func(t CCTier) bool { return t.Queue == rest[0] && t.Agent == rest[1] })
		return "+OK\n"
	}
	// The list and count commands are not modelled: say so rather than
	// answer something mod_callcenter would not.
	return "-ERR fakefs: callcenter_config " + section + " " + action + " not modelled\n"
}

// ccQueueColumns is the header mod_callcenter writes for "queue list".
const ccQueueColumns = "name|strategy|moh_sound|time_base_score|tier_rules_apply|tier_rule_wait_second|tier_rule_wait_multiply_level|tier_rule_no_agent_no_wait|discard_abandoned_after|abandoned_resume_allowed|max_wait_time|max_wait_time_with_no_agent|max_wait_time_with_no_agent_time_reached|record_template|calls_answered|calls_abandoned|ring_progressively_delay|skip_agents_with_external_calls|agent_no_answer_status"

// ccAgentColumns are the agents table's columns ("SELECT * FROM agents").
var ccAgentColumns = []string{"name", "instance_id", "uuid", "type", "contact", "status", "state", "max_no_answer", "wrap_up_time",
	"reject_delay_time", "busy_delay_time", "no_answer_delay_time", "last_bridge_start", "last_bridge_end", "last_offered_call",
	"last_status_change", "no_answer_count", "calls_answered", "talk_time", "ready_time", "external_calls_count"}

// ccList answers "queue list", "agent list" and "tier list" as the module
// prints them: "|"-separated rows, a header row (for agents and tiers only
// when there is a row: it comes from the SQL callback), then "+OK".
func (s *Server) ccList(section string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	switch section {
	case "queue":
		b.WriteString(ccQueueColumns + "\n")
		cols := strings.Split(ccQueueColumns, "|")
		for _, name := range slices.Sorted(maps.Keys(s.cc.queues)) {
			row := []string{name}
			for _, c := range cols[1:] {
				row = append(row, s.cc.queues[name][strings.ReplaceAll(strings.Replace(c, "moh_sound", "moh-sound", 1), "_", "-")])
			}
			b.WriteString(strings.Join(row, "|") + "\n")
		}
	case "agent":
		for i, name := range slices.Sorted(maps.Keys(s.cc.agents)) {
			if i == 0 {
				b.WriteString(strings.Join(ccAgentColumns, "|") + "\n")
			}
			a := s.cc.agents[name]
			row := []string{a.Name, "single_box", a.Settings["uuid"], a.Type, a.Contact, a.Status, a.State}
			for _, c := range ccAgentColumns[7:] {
				row = append(row, cmp.Or(a.Settings[c], "0"))
			}
			b.WriteString(strings.Join(row, "|") + "\n")
		}
	case "tier":
		tiers := slices.Clone(s.cc.tiers)
		slices.SortStableFunc(tiers, func(x, y CCTier) int {
			return cmp.Or(cmp.Compare(x.Level, y.Level), cmp.Compare(x.Position, y.Position))
		})
		for i, t := range tiers {
			if i == 0 {
				b.WriteString("queue|agent|state|level|position\n")
			}
			fmt.Fprintf(&b, "%s|%s|Ready|%d|%d\n", t.Queue, t.Agent, t.Level, t.Position)
		}
	default:
		return "-ERR fakefs: callcenter_config " + section + " list not modelled\n"
	}
	return b.String() + "+OK\n"
}

func (s *Server) ccAgentSetLocked(key, name, value string) string {
	a, ok := s.cc.agents[name]
	if !ok {
		return "-ERR Agent not found!\n"
	}
	switch key {
	case "status":
		st, ok := foldIn(ccStatuses, value)
		if !ok {
			return "-ERR Invalid Agent Status!\n"
		}
		a.Status = st
	case "state":
		st, ok := foldIn(ccStates, value)
		if !ok {
			return "-ERR Invalid Agent State!\n"
		}
		a.State = st
	case "contact":
		a.Contact = value
	case "type":
		if !strings.EqualFold(value, "callback") && !strings.EqualFold(value, "uuid-standby") {
			return "-ERR Invalid Agent Type!\n"
		}
		a.Type = value
	case "uuid", "ready_time", "busy_delay_time", "reject_delay_time", "no_answer_delay_time", "max_no_answer", "wrap_up_time":
		if key != "uuid" {
			// The module stores atoi/atol of the value.
			n, _ := strconv.Atoi(value)
			value = strconv.Itoa(n)
		}
		a.Settings[key] = value
	default:
		return "-ERR Invalid Agent Update KEY!\n"
	}
	return "+OK\n"
}

func (s *Server) ccTierAddLocked(queue, agent, level, position string) string {
	if _, ok := s.cc.queues[queue]; !ok {
		return "-ERR Queue not found!\n" // unloaded while the tier was added
	}
	if _, ok := s.cc.agents[agent]; !ok {
		return "-ERR Agent not found!\n"
	}
	for _, t := range s.cc.tiers {
		if t.Queue == queue && t.Agent == agent {
			return "-ERR Tier already exist!\n"
		}
	}
	l, _ := strconv.Atoi(level)
	p, _ := strconv.Atoi(position)
	s.cc.tiers = append(s.cc.tiers, CCTier{Queue: queue, Agent: agent, Level: l, Position: p})
	return "+OK\n"
}

func (s *Server) ccTierSetLocked(key, queue, agent, value string) string {
	if _, ok := s.cc.agents[agent]; !ok {
		return "-ERR Agent not found!\n"
	}
	i := slices.IndexFunc(s.cc.tiers, func(t CCTier) bool { return t.Queue == queue && t.Agent == agent })
	if i < 0 {
		return "-ERR Unknown Error!\n"
	}
	n, _ := strconv.Atoi(value)
	switch key {
	case "level":
		s.cc.tiers[i].Level = n
	case "position":
		s.cc.tiers[i].Position = n
	case "state":
		if _, ok := foldIn(ccTierStates, value); !ok {
			return "-ERR Invalid Tier State!\n"
		}
	default:
		return "-ERR Invalid Tier Update KEY!\n"
	}
	return "+OK\n"
}

// ccQueue runs the queue commands; load fetches without holding the lock.
func (s *Server) ccQueue(action string, rest []string) string {
	if action != "load" && action != "unload" && action != "reload" {
		return "-ERR fakefs: callcenter_config queue " + action + " not modelled\n"
	}
	if len(rest) < 1 {
		return "-ERR Invalid!\n"
	}
	name := rest[0]
	s.mu.Lock()
	if s.cc.queues == nil {
		s.cc.queues = map[string]map[string]string{}
	}
	_, loaded := s.cc.queues[name]
	if action != "load" {
		delete(s.cc.queues, name)
		loaded = false
	}
	s.mu.Unlock()
	if action == "unload" {
		return "+OK\n"
	}
	if loaded {
		return "+OK\n"
	}
	params, err := s.fetchQueue(name)
	if err != nil || params == nil {
		return "-ERR Invalid Queue not found!\n"
	}
	s.mu.Lock()
	s.cc.queues[name] = params
	s.mu.Unlock()
	return "+OK\n"
}

// ccDocument is callcenter.conf as mod_callcenter reads a queue from it.
type ccDocument struct {
	Sections []struct {
		Configurations []struct {
			Name   string `xml:"name,attr"`
			Queues []struct {
				Name   string `xml:"name,attr"`
				Params []struct {
					Name  string `xml:"name,attr"`
					Value string `xml:"value,attr"`
				} `xml:"param"`
			} `xml:"queues>queue"`
		} `xml:"configuration"`
	} `xml:"section"`
}

// fetchQueue asks mod_xml_curl's URL for callcenter.conf with CC-Queue, as
// load_queue does, and returns the queue's params (nil: not in the answer).
func (s *Server) fetchQueue(name string) (map[string]string, error) {
	if s.xmlCurlURL() == "" {
		return nil, nil
	}
	form := s.fetchForm("configuration", "configuration", "name", "callcenter.conf")
	form.Set("CC-Queue", name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body, err := s.postFetch(ctx, form)
	if err != nil {
		return nil, fmt.Errorf("fakefs callcenter fetch: %w", err)
	}
	var doc ccDocument
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("fakefs callcenter fetch: %w", err)
	}
	for _, sec := range doc.Sections {
		for _, c := range sec.Configurations {
			if c.Name != "callcenter.conf" {
				continue
			}
			for _, q := range c.Queues {
				if q.Name == name {
					params := map[string]string{}
					for _, p := range q.Params {
						params[p.Name] = p.Value
					}
					return params, nil
				}
			}
		}
	}
	return nil, nil
}
