// Package gwstate keeps the live state of the nodes' sofia gateways (the
// SIP trunks) in Redis, beside the live channels: what each node last
// said of each gateway's registration, and since when.
//
// Sources, all from the node's own words (mod_sofia, sofia_reg.c):
//
//   - CUSTOM sofia::gateway_state (sofia_reg_fire_custom_gateway_state_event):
//     fired on every change of a gateway's registration state, and when
//     the address a registration went to changes; headers Gateway, State
//     (sofia_state_string), Ping-Status (DOWN, UP, INVALID),
//     Register-Network-IP and -Port when known, Phrase and Status when a
//     SIP answer caused it.
//   - CUSTOM sofia::gateway_add (Gateway, profile-name): a gateway was
//     loaded. A gateway that does not register (NOREG) never fires a
//     state event, so its state is read with "sofia xmlstatus gateway
//     <name>" (Refresh).
//   - CUSTOM sofia::gateway_delete (Gateway, profile-name): the gateway is
//     gone from the node.
//   - "sofia xmlstatus gateway" when the node's event connection comes
//     (back) up (Snapshot): every gateway the node holds, so a restart of
//     Switchboard or of the connection is not blind.
//
// When the node's event connection is lost its gateways become
// "unknown" (NodeDown): the node may have registered, failed or gone
// meanwhile.
//
// Redis layout (prefix as the channel tracker's, "sb:<installation>:"
// plus the hash tag "{gateways}:", shown as sb:), tenant-agnostic as
// trunks are platform objects:
//
//	sb:gw:<gateway>     hash, node -> State JSON
//	sb:gwnode:<node>    set of the gateways the node reported
//	sb:gwgone:<node>:<gateway>  when the node deleted it (µs), kept 10 minutes
package gwstate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/platform/keyprefix"
)

// The CUSTOM event subclasses of mod_sofia the state follows.
const (
	StateSubclass  = esl.GatewayStateSubclass
	AddSubclass    = esl.GatewayAddSubclass
	DeleteSubclass = esl.GatewayDeleteSubclass
)

// Conditions: what a person needs to know of a gateway on a node.
const (
	Registered = "registered"  // REGED: the registration holds
	Failed     = "failed"      // FAILED, FAIL_WAIT, TIMEOUT: refused or unanswered, retrying
	Down       = "down"        // DOWN, UNREGISTER, or a non-registering gateway whose pings fail
	Up         = "up"          // NOREG with pings answered (or not pinged): usable without registering
	Trying     = "registering" // UNREGED, TRYING, REGISTER, EXPIRED: on the way
	Unknown    = "unknown"     // the node's event connection is down: nothing is known
)

// Conditions lists every condition, for the API's schema.
var Conditions = []string{Registered, Failed, Down, Up, Trying, Unknown}

// Condition derives the condition from sofia's state and ping status.
func Condition(state, ping string) string {
	switch state {
	case "REGED":
		return Registered
	case "FAILED", "FAIL_WAIT", "TIMEOUT":
		return Failed
	case "DOWN", "UNREGISTER":
		return Down
	case "NOREG":
		if ping == "DOWN" || ping == "INVALID" {
			return Down
		}
		return Up
	case "UNREGED", "TRYING", "REGISTER", "EXPIRED":
		return Trying
	}
	return Unknown
}

// State is one node's view of one gateway.
type State struct {
	Gateway   string `json:"gateway"`
	Node      string `json:"node"`
	Profile   string `json:"profile,omitempty"`
	Condition string `json:"condition"`
	// SofiaState and PingStatus are FreeSWITCH's words (the last the node
	// said while it was connected).
	SofiaState string `json:"state"`
	PingStatus string `json:"ping_status"`
	// SIPStatus and SIPPhrase are the SIP answer that caused the last
	// change, when one did.
	SIPStatus int    `json:"sip_status,omitempty"`
	SIPPhrase string `json:"sip_phrase,omitempty"`
	// RegisterIP and RegisterPort are where the registration went.
	RegisterIP   string `json:"register_ip,omitempty"`
	RegisterPort int    `json:"register_port,omitempty"`
	// Since is when the condition last changed; UpdatedAt when the node
	// last reported.
	Since     time.Time `json:"since"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Store reads and writes the live gateway state.
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	now    func() time.Time
}

// New returns a Store on rdb under prefix (the installation's key prefix;
// "" selects the default). Like the channel tracker's, a prefix without a
// hash tag gets one ("{gateways}:"), so the few multi-key writes stay in
// one Redis Cluster slot.
func New(rdb redis.UniversalClient, prefix string) *Store {
	prefix = keyprefix.OrDefault(prefix)
	if !strings.Contains(prefix, "{") {
		prefix += "{gateways}:"
	}
	return &Store{rdb: rdb, prefix: prefix, now: time.Now}
}

func (s *Store) gwKey(gateway string) string { return s.prefix + "gw:" + gateway }
func (s *Store) nodeKey(node string) string  { return s.prefix + "gwnode:" + node }

// Is reports whether e is one of the gateway events the Store follows.
func Is(e esl.Event) bool {
	if e.Name() != "CUSTOM" {
		return false
	}
	switch e.Get("Event-Subclass") {
	case StateSubclass, AddSubclass, DeleteSubclass:
		return true
	}
	return false
}

// Apply stores what a gateway event says. A gateway_add is read back from
// the node with ask (nil: the gateway is recorded when its first state
// event comes).
func (s *Store) Apply(ctx context.Context, e esl.Event, ask func(ctx context.Context, node, gateway string) (string, error)) error {
	gw := e.Get("Gateway")
	if gw == "" || e.Node == "" {
		return nil
	}
	switch e.Get("Event-Subclass") {
	case StateSubclass:
		st := State{Gateway: gw, Node: e.Node, SofiaState: e.Get("State"), PingStatus: e.Get("Ping-Status"),
			SIPPhrase: e.Get("Phrase"), RegisterIP: e.Get("Register-Network-IP")}
		st.SIPStatus, _ = strconv.Atoi(e.Get("Status"))
		st.RegisterPort, _ = strconv.Atoi(e.Get("Register-Network-Port"))
		st.Condition = Condition(st.SofiaState, st.PingStatus)
		st.Since = eventTime(e, s.now())
		old, err := s.get(ctx, gw, e.Node)
		if err != nil {
			return err
		}
		if old == nil {
			// eslgo hands each event to its own goroutine and the
			// dispatcher's reorder window is short: on a loaded host the
			// DOWN that killgw fires before gateway_delete can come after
			// it, and would bring the deleted gateway back for good (seen
			// in CI). A state older than the gateway's deletion is stale.
			gone, err := s.deletedAt(ctx, e.Node, gw)
			if err != nil {
				return err
			}
			if !gone.IsZero() && !st.Since.After(gone) {
				return nil
			}
		}
		if old != nil {
			st.Profile = old.Profile
			if old.Condition == st.Condition {
				st.Since = old.Since
				// FAILED carries the SIP answer, the FAIL_WAIT after it
				// none: the failure's reason stays while it fails.
				if st.SIPStatus == 0 && st.SIPPhrase == "" {
					st.SIPStatus, st.SIPPhrase = old.SIPStatus, old.SIPPhrase
				}
			}
			if st.RegisterIP == "" {
				st.RegisterIP, st.RegisterPort = old.RegisterIP, old.RegisterPort
			}
		}
		st.UpdatedAt = s.now().UTC()
		return s.put(ctx, st)
	case DeleteSubclass:
		var at time.Time
		if us, err := strconv.ParseInt(e.Get("Event-Date-Timestamp"), 10, 64); err == nil && us > 0 {
			at = time.UnixMicro(us)
		}
		return s.removeAt(ctx, e.Node, gw, at)
	case AddSubclass:
		if ask == nil {
			return nil
		}
		reply, err := ask(ctx, e.Node, gw)
		if err != nil {
			return fmt.Errorf("gateway %s on %s: %w", gw, e.Node, err)
		}
		h, found, err := ParseOne(reply)
		if err != nil || !found {
			return err // gone again before it was asked about: its delete event follows
		}
		return s.snapshotOne(ctx, e.Node, h, s.now())
	}
	return nil
}

// eventTime is when FreeSWITCH fired e (Event-Date-Timestamp, µs), else
// fallback.
func eventTime(e esl.Event, fallback time.Time) time.Time {
	us, err := strconv.ParseInt(e.Get("Event-Date-Timestamp"), 10, 64)
	if err != nil || us <= 0 {
		return fallback.UTC()
	}
	return time.UnixMicro(us).UTC()
}

// Snapshot replaces what node said of its gateways with the answer of
// "sofia xmlstatus gateway" (called when its event connection comes up,
// before its events flow): gateways it no longer holds are dropped; a
// gateway whose condition is unchanged keeps its Since.
func (s *Store) Snapshot(ctx context.Context, node, reply string) error {
	held, err := ParseStatus(reply)
	if err != nil {
		return fmt.Errorf("gateway status of %s: %w", node, err)
	}
	now := s.now()
	names := map[string]bool{}
	for _, h := range held {
		names[h.Name] = true
		if err := s.snapshotOne(ctx, node, h, now); err != nil {
			return err
		}
	}
	known, err := s.rdb.SMembers(ctx, s.nodeKey(node)).Result()
	if err != nil {
		return fmt.Errorf("gateways of %s: %w", node, err)
	}
	for _, gw := range known {
		if !names[gw] {
			if err := s.remove(ctx, node, gw); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapshotOne stores one gateway as xmlstatus reported it at now.
func (s *Store) snapshotOne(ctx context.Context, node string, h Held, now time.Time) error {
	st := State{Gateway: h.Name, Node: node, Profile: h.Profile, SofiaState: h.State, PingStatus: h.Status,
		Condition: Condition(h.State, h.Status), UpdatedAt: now.UTC()}
	old, err := s.get(ctx, h.Name, node)
	if err != nil {
		return err
	}
	switch {
	case old != nil && old.Condition == st.Condition:
		st.Since = old.Since
		st.SIPStatus, st.SIPPhrase, st.RegisterIP, st.RegisterPort = old.SIPStatus, old.SIPPhrase, old.RegisterIP, old.RegisterPort
	case h.Status == "UP" && h.Uptime > 0 && (st.Condition == Registered || st.Condition == Up):
		// Up since the status went UP (mod_sofia's uptime).
		st.Since = now.Add(-time.Duration(h.Uptime) * time.Microsecond).UTC()
	default:
		st.Since = now.UTC()
	}
	return s.put(ctx, st)
}

// NodeDown marks every gateway node reported as unknown (its event
// connection is lost). The last sofia state stays for reference.
func (s *Store) NodeDown(ctx context.Context, node string) error {
	known, err := s.rdb.SMembers(ctx, s.nodeKey(node)).Result()
	if err != nil {
		return fmt.Errorf("gateways of %s: %w", node, err)
	}
	now := s.now().UTC()
	for _, gw := range known {
		st, err := s.get(ctx, gw, node)
		if err != nil {
			return err
		}
		if st == nil || st.Condition == Unknown {
			continue
		}
		st.Condition, st.Since, st.UpdatedAt = Unknown, now, now
		if err := s.put(ctx, *st); err != nil {
			return err
		}
	}
	return nil
}

// Forget drops everything node reported (it left the configuration).
func (s *Store) Forget(ctx context.Context, node string) error {
	known, err := s.rdb.SMembers(ctx, s.nodeKey(node)).Result()
	if err != nil {
		return fmt.Errorf("gateways of %s: %w", node, err)
	}
	for _, gw := range known {
		if err := s.remove(ctx, node, gw); err != nil {
			return err
		}
	}
	return nil
}

// Gateway returns every node's state of gateway, by node name.
func (s *Store) Gateway(ctx context.Context, gateway string) ([]State, error) {
	m, err := s.Gateways(ctx, []string{gateway})
	return m[gateway], err
}

// Gateways returns every node's state of each gateway named, by node
// name, in one round trip.
func (s *Store) Gateways(ctx context.Context, gateways []string) (map[string][]State, error) {
	cmds := make([]*redis.MapStringStringCmd, len(gateways))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, gw := range gateways {
			cmds[i] = p.HGetAll(ctx, s.gwKey(gw))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("gateway states: %w", err)
	}
	out := make(map[string][]State, len(gateways))
	for i, gw := range gateways {
		list := []State{}
		for node, raw := range cmds[i].Val() {
			var st State
			if json.Unmarshal([]byte(raw), &st) != nil {
				continue
			}
			st.Gateway, st.Node = gw, node
			list = append(list, st)
		}
		slices.SortFunc(list, func(a, b State) int { return strings.Compare(a.Node, b.Node) })
		out[gw] = list
	}
	return out, nil
}

func (s *Store) get(ctx context.Context, gateway, node string) (*State, error) {
	raw, err := s.rdb.HGet(ctx, s.gwKey(gateway), node).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gateway %s state on %s: %w", gateway, node, err)
	}
	var st State
	if json.Unmarshal([]byte(raw), &st) != nil {
		return nil, nil // unreadable: replaced by the next write
	}
	return &st, nil
}

func (s *Store) put(ctx context.Context, st State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, s.gwKey(st.Gateway), st.Node, b)
		p.SAdd(ctx, s.nodeKey(st.Node), st.Gateway)
		return nil
	})
	if err != nil {
		return fmt.Errorf("gateway %s state on %s: %w", st.Gateway, st.Node, err)
	}
	return nil
}

func (s *Store) remove(ctx context.Context, node, gateway string) error {
	return s.removeAt(ctx, node, gateway, time.Time{})
}

// goneFor is how long a deleted gateway's deletion time is kept: far
// longer than any event could lag behind the gateway_delete.
const goneFor = 10 * time.Minute

func (s *Store) goneKey(node, gateway string) string {
	return s.prefix + "gwgone:" + node + ":" + gateway
}

// removeAt forgets a gateway of node; a deletion the node dated (at) is
// remembered for goneFor, so a state event fired before it and handed
// over after it is ignored.
func (s *Store) removeAt(ctx context.Context, node, gateway string, at time.Time) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, s.gwKey(gateway), node)
		p.SRem(ctx, s.nodeKey(node), gateway)
		if !at.IsZero() {
			p.Set(ctx, s.goneKey(node, gateway), at.UnixMicro(), goneFor)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("gateway %s on %s: %w", gateway, node, err)
	}
	return nil
}

// deletedAt is when node last deleted gateway, zero when that is not
// remembered.
func (s *Store) deletedAt(ctx context.Context, node, gateway string) (time.Time, error) {
	us, err := s.rdb.Get(ctx, s.goneKey(node, gateway)).Int64()
	if err == redis.Nil {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("gateway %s deletion on %s: %w", gateway, node, err)
	}
	return time.UnixMicro(us), nil
}
