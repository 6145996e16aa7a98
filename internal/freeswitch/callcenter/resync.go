package callcenter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/models"
)

// A node that was disconnected while queues, agents or tiers changed
// missed those changes (Handle only reaches connected nodes), and a
// tenant's delete leaves nothing in the database to say which queues it
// had. Both are settled by comparing: what mod_callcenter on the node holds
// of our objects (its "queue list", "agent list" and "tier list") with
// what the database says it should hold, and sending the difference.

// ccState is what mod_callcenter holds, or should hold, of our objects.
type ccState struct {
	queues map[string]bool
	// agents maps a name to its settings (desired) or nil (held).
	agents map[string][][2]string
	tiers  map[[2]string]dialplan.Tier // by {queue, agent}
}

func newState() *ccState {
	return &ccState{queues: map[string]bool{}, agents: map[string][][2]string{}, tiers: map[[2]string]dialplan.Tier{}}
}

// Resync makes mod_callcenter on node hold exactly the queues, agents and
// tiers of every enabled tenant (called when a node's event connection
// comes back, so it runs on the one replica holding that node).
func (s *Sync) Resync(ctx context.Context, node string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tenants, err := s.st.Records(ctx, s.st.Registry().Resource("tenants"), models.Owner{}, nil)
	if err != nil {
		return fmt.Errorf("callcenter resync: tenants: %w", err)
	}
	want := newState()
	for _, t := range tenants {
		name, _ := t["tenant"].(string)
		if enabled, _ := t["enabled"].(bool); !enabled || name == "" {
			continue
		}
		if err := s.desired(ctx, name, want); err != nil {
			return err
		}
	}
	return s.reconcile(ctx, node, func(string) bool { return true }, want)
}

// tenantChange settles one tenant on every connected node after it was
// deleted, disabled or enabled: a tenant that is gone or disabled leaves
// nothing behind; an enabled one gets all of its queues and agents.
func (s *Sync) tenantChange(ctx context.Context, c changes.Change) error {
	name := c.Key
	enabled := func(raw json.RawMessage) bool {
		var t struct {
			Enabled bool `json:"enabled"`
		}
		return len(raw) > 0 && json.Unmarshal(raw, &t) == nil && t.Enabled
	}
	switch {
	case c.Op == changes.Delete:
	case c.Op == changes.Update && enabled(c.Before) != enabled(c.After):
	default:
		return nil
	}
	want := newState()
	if c.Op != changes.Delete && enabled(c.After) {
		if err := s.desired(ctx, name, want); err != nil {
			return err
		}
	}
	var errs []error
	for _, n := range s.nodes.Nodes() {
		if n.Up {
			errs = append(errs, s.reconcile(ctx, n.Name, func(t string) bool { return t == name }, want))
		}
	}
	return errors.Join(errs...)
}

// desired adds a tenant's enabled queues, usable agents and their tiers.
func (s *Sync) desired(ctx context.Context, tenant string, into *ccState) error {
	queues, err := records[dialplan.Queue](ctx, s.st, tenant, "queues")
	if err != nil {
		return err
	}
	agents, err := records[dialplan.Agent](ctx, s.st, tenant, "agents")
	if err != nil {
		return err
	}
	for _, q := range queues {
		if q.Enabled && validName(tenant, q.Number) {
			into.queues[naming.QueueName(tenant, q.Number)] = true
		}
	}
	snap := &dialplan.TenantSnapshot{Tenant: dialplan.Tenant{Tenant: tenant, Enabled: true}, Queues: queues}
	for i := range agents {
		a := &agents[i]
		set := dialplan.AgentSettings(s.domain, tenant, a)
		if set == nil || !validName(tenant, a.AgentNumber) {
			continue
		}
		into.agents[naming.AgentName(tenant, a.AgentNumber)] = set
		for _, t := range dialplan.AgentTiers(snap, a) {
			if into.queues[t.Queue] {
				into.tiers[[2]string{t.Queue, t.Agent}] = t
			}
		}
	}
	return nil
}

// held reads what the node's mod_callcenter holds of the tenants in scope.
func (s *Sync) held(ctx context.Context, node string, scope func(tenant string) bool) (*ccState, error) {
	ours := func(name string) bool {
		_, tenant, ok := naming.SplitCallcenterName(name)
		return ok && scope(tenant)
	}
	out := newState()
	for _, section := range []string{"queue", "agent", "tier"} {
		rows, err := s.list(ctx, node, section)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			switch {
			case section == "queue" && ours(r[0]):
				out.queues[r[0]] = true
			case section == "agent" && ours(r[0]):
				out.agents[r[0]] = nil
			case section == "tier" && len(r) >= 5 && ours(r[0]) && ours(r[1]):
				level, _ := strconv.Atoi(r[3])
				position, _ := strconv.Atoi(r[4])
				out.tiers[[2]string{r[0], r[1]}] = dialplan.Tier{Queue: r[0], Agent: r[1], Level: level, Position: position}
			}
		}
	}
	return out, nil
}

// list runs "callcenter_config <section> list" and returns its data rows,
// split at "|": mod_callcenter prints a header row (for agents and tiers
// only when there are rows), the rows, then "+OK".
func (s *Sync) list(ctx context.Context, node, section string) ([][]string, error) {
	reply, err := s.call(ctx, node, command.CallcenterList(section))
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for i, line := range strings.Split(strings.TrimRight(reply, "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line == "+OK" || i == 0 && (strings.HasPrefix(line, "name|") || strings.HasPrefix(line, "queue|")) {
			continue
		}
		rows = append(rows, strings.Split(line, "|"))
	}
	return rows, nil
}

// reconcile sends node the commands that turn what it holds (of the
// tenants in scope) into want: unload and delete what should not be there,
// load or reload every wanted queue (a reload reads its settings again),
// add every wanted agent with all its settings, and settle the tiers.
func (s *Sync) reconcile(ctx context.Context, node string, scope func(string) bool, want *ccState) error {
	have, err := s.held(ctx, node, scope)
	if err != nil {
		return err
	}
	var cmds []step
	for _, q := range sortedKeys(have.queues) {
		if !want.queues[q] {
			cmds = append(cmds, step{cmd: command.QueueUnload(q)})
		}
	}
	for _, a := range sortedKeys(have.agents) {
		if _, ok := want.agents[a]; !ok {
			cmds = append(cmds, step{cmd: command.AgentDel(a)}) // its tiers go with it
		}
	}
	for _, q := range sortedKeys(want.queues) {
		if have.queues[q] {
			cmds = append(cmds, step{cmd: command.QueueReload(q)})
		} else {
			cmds = append(cmds, step{cmd: command.QueueLoad(q)})
		}
	}
	for _, a := range sortedKeys(want.agents) {
		cmds = append(cmds, step{cmd: command.AgentAdd(a), exists: "-ERR Agent already exist!"})
		for _, kv := range want.agents[a] {
			cmds = append(cmds, agentSet(kv[0], a, kv[1]))
		}
	}
	for _, k := range sortedKeys(have.tiers) {
		if _, ok := want.tiers[k]; !ok {
			if _, kept := want.agents[k[1]]; kept {
				cmds = append(cmds, step{cmd: command.TierDel(k[0], k[1])})
			}
		}
	}
	for _, k := range sortedKeys(want.tiers) {
		if h, ok := have.tiers[k]; !ok || h != want.tiers[k] {
			cmds = append(cmds, tierAdd(want.tiers[k]))
		}
	}
	return s.send(ctx, node, cmds)
}

func sortedKeys[K interface{ ~string | ~[2]string }, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b K) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out
}
