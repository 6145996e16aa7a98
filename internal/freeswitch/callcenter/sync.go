// Package callcenter keeps mod_callcenter on every connected FreeSWITCH
// node in step with the queues and agents resources at run time.
// mod_callcenter reads agents and tiers from callcenter.conf only when the
// module loads, and a queue only when asked to load it, so after each
// committed change this outbox subscriber sends the callcenter_config
// commands that apply it: queue load, reload and unload; agent add, set and
// del; tier add, set and del. Commands are built from validated parts only
// (names "<number>@<tenant>", contacts and settings from package dialplan).
package callcenter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/models"
)

// Nodes is what the sync needs of the node pool.
type Nodes = esl.Commander

// Sync is the outbox subscriber.
type Sync struct {
	// mu runs one Handle or Resync at a time, so a resync never sends
	// what it read before a change this replica applies meanwhile.
	mu     sync.Mutex
	nodes  Nodes
	st     *models.Store
	domain string
	log    *slog.Logger
}

// NewSync returns the subscriber; domain is the installation's SIP domain
// (agents' contacts).
func NewSync(nodes Nodes, st *models.Store, domain string, log *slog.Logger) *Sync {
	if log == nil {
		log = slog.Default()
	}
	return &Sync{nodes: nodes, st: st, domain: domain, log: log}
}

// Name is the subscriber's stable name.
func (s *Sync) Name() string { return "freeswitch-callcenter" }

// command is one callcenter_config command. A reply equal to exists means
// the module already holds what the command adds (a redelivered change):
// then orElse is sent instead, or nothing.
type step struct {
	cmd    command.Command
	exists string
	orElse []command.Command
	// skipIf is a reply that means the command is not needed here (a
	// queue's tier for an agent the node does not hold yet: the agent's own
	// change, later in the outbox, adds it with all its tiers).
	skipIf string
}

// Handle applies one change on every node whose command connection is up
// (a node that is down misses it and is settled by Resync when it
// reconnects). Every command is safe to repeat, so a change
// that failed on one node is retried whole by the dispatcher.
func (s *Sync) Handle(ctx context.Context, c changes.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cmds []step
	var err error
	switch c.Resource {
	case "queues":
		cmds, err = s.queueCommands(ctx, c)
	case "agents":
		cmds, err = s.agentCommands(ctx, c)
	case "tenants":
		return s.tenantChange(ctx, c)
	default:
		return nil
	}
	if err != nil || len(cmds) == 0 {
		return err
	}
	var errs []error
	for _, n := range s.nodes.Nodes() {
		if !n.Up {
			continue
		}
		if err := s.send(ctx, n.Name, cmds); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Sync) send(ctx context.Context, node string, cmds []step) error {
	for _, cmd := range cmds {
		err := s.api(ctx, node, cmd.cmd)
		var ce *esl.CommandError
		if err != nil && cmd.skipIf != "" && errors.As(err, &ce) && strings.TrimSpace(ce.Reply) == cmd.skipIf {
			continue
		}
		if err != nil && cmd.exists != "" && errors.As(err, &ce) && strings.TrimSpace(ce.Reply) == cmd.exists {
			for _, alt := range cmd.orElse {
				if err := s.api(ctx, node, alt); err != nil {
					return err
				}
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Sync) api(ctx context.Context, node string, cmd command.Command) error {
	_, err := s.call(ctx, node, cmd)
	return err
}

// call runs one callcenter_config command and returns its reply.
func (s *Sync) call(ctx context.Context, node string, cmd command.Command) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	reply, err := s.nodes.API(cctx, node, cmd)
	if err != nil {
		return "", fmt.Errorf("callcenter sync: %w", err)
	}
	return reply, nil
}

// agentSet is one agent setting (command.AgentSet).
func agentSet(key, agent, value string) step {
	return step{cmd: command.AgentSet(key, agent, value)}
}

// decode reads a change's before or after object (nil when absent).
func decode[T any](raw json.RawMessage) (*T, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("callcenter sync: decode change: %w", err)
	}
	return &v, nil
}

// records reads a tenant's objects of one resource into renderer types.
func records[T any](ctx context.Context, st *models.Store, tenant, resource string) ([]T, error) {
	o, err := st.Tenant(ctx, tenant)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil // the tenant is gone: nothing of it to apply
	}
	if err != nil {
		return nil, fmt.Errorf("callcenter sync: tenant %s: %w", tenant, err)
	}
	recs, err := st.Records(ctx, st.Registry().Resource(resource), o, nil)
	if err != nil {
		return nil, fmt.Errorf("callcenter sync: %w", err)
	}
	raw, err := json.Marshal(recs)
	if err != nil {
		return nil, fmt.Errorf("callcenter sync: %w", err)
	}
	var out []T
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("callcenter sync: decode %s: %w", resource, err)
	}
	return out, nil
}

func tierAdd(t dialplan.Tier) step {
	return step{
		cmd:    command.TierAdd(t.Queue, t.Agent, t.Level, t.Position),
		exists: "-ERR Tier already exist!",
		orElse: []command.Command{
			command.TierSetLevel(t.Queue, t.Agent, t.Level),
			command.TierSetPosition(t.Queue, t.Agent, t.Position),
		},
	}
}

// queueCommands: a queue that stops being served (deleted, disabled,
// renumbered) is unloaded under its old name; one that starts is loaded
// (mod_callcenter fetches callcenter.conf for it) and its agents' tiers are
// added; an edited one is reloaded, which keeps its tiers.
func (s *Sync) queueCommands(ctx context.Context, c changes.Change) ([]step, error) {
	before, err := decode[dialplan.Queue](c.Before)
	if err != nil {
		return nil, err
	}
	after, err := decode[dialplan.Queue](c.After)
	if err != nil {
		return nil, err
	}
	served := func(q *dialplan.Queue) bool { return q != nil && q.Enabled && validName(c.Tenant, q.Number) }
	var cmds []step
	if served(before) && (!served(after) || after.Number != before.Number) {
		cmds = append(cmds, step{cmd: command.QueueUnload(naming.QueueName(c.Tenant, before.Number))})
	}
	if !served(after) {
		return cmds, nil
	}
	name := naming.QueueName(c.Tenant, after.Number)
	if served(before) && before.Number == after.Number {
		return append(cmds, step{cmd: command.QueueReload(name)}), nil
	}
	cmds = append(cmds, step{cmd: command.QueueLoad(name)})
	agents, err := records[dialplan.Agent](ctx, s.st, c.Tenant, "agents")
	if err != nil {
		return nil, err
	}
	snap := &dialplan.TenantSnapshot{Tenant: dialplan.Tenant{Tenant: c.Tenant, Enabled: true}, Queues: []dialplan.Queue{*after}}
	for i := range agents {
		for _, t := range dialplan.AgentTiers(snap, &agents[i]) {
			cmd := tierAdd(t)
			cmd.skipIf = "-ERR Agent not found!"
			cmds = append(cmds, cmd)
		}
	}
	return cmds, nil
}

// agentCommands: an agent that stops (deleted, disabled, renumbered,
// unreachable) is deleted with its tiers; a new one is added with every
// setting and tier; an edited one gets the settings that changed and the
// tier differences.
func (s *Sync) agentCommands(ctx context.Context, c changes.Change) ([]step, error) {
	before, err := decode[dialplan.Agent](c.Before)
	if err != nil {
		return nil, err
	}
	after, err := decode[dialplan.Agent](c.After)
	if err != nil {
		return nil, err
	}
	settings := func(a *dialplan.Agent) [][2]string {
		if a == nil || !validName(c.Tenant, a.AgentNumber) {
			return nil
		}
		return dialplan.AgentSettings(s.domain, c.Tenant, a)
	}
	oldSet, newSet := settings(before), settings(after)
	var oldName, newName string
	if oldSet != nil {
		oldName = naming.AgentName(c.Tenant, before.AgentNumber)
	}
	if newSet != nil {
		newName = naming.AgentName(c.Tenant, after.AgentNumber)
	}
	var cmds []step
	if oldSet != nil && oldName != newName {
		cmds = append(cmds, step{cmd: command.AgentDel(oldName)})
	}
	if newSet == nil {
		return cmds, nil
	}
	fresh := oldName != newName
	if fresh {
		cmds = append(cmds, step{cmd: command.AgentAdd(newName), exists: "-ERR Agent already exist!"})
	}
	for i, kv := range newSet {
		if !fresh && oldSet[i] == kv {
			continue
		}
		cmds = append(cmds, agentSet(kv[0], newName, kv[1]))
	}
	queues, err := records[dialplan.Queue](ctx, s.st, c.Tenant, "queues")
	if err != nil {
		return nil, err
	}
	snap := &dialplan.TenantSnapshot{Tenant: dialplan.Tenant{Tenant: c.Tenant, Enabled: true}, Queues: queues}
	want := dialplan.AgentTiers(snap, after)
	var had []dialplan.Tier
	if !fresh {
		had = dialplan.AgentTiers(snap, before)
	}
	for _, h := range had {
		if !containsQueue(want, h.Queue) {
			cmds = append(cmds, step{cmd: command.TierDel(h.Queue, h.Agent)})
		}
	}
	for _, w := range want {
		switch i := indexQueue(had, w.Queue); {
		case i < 0:
			cmds = append(cmds, tierAdd(w))
		case had[i] != w:
			cmds = append(cmds, step{cmd: tierAdd(w).orElse[0]}, step{cmd: tierAdd(w).orElse[1]})
		}
	}
	return cmds, nil
}

func indexQueue(ts []dialplan.Tier, queue string) int {
	for i, t := range ts {
		if t.Queue == queue {
			return i
		}
	}
	return -1
}

func containsQueue(ts []dialplan.Tier, queue string) bool { return indexQueue(ts, queue) >= 0 }

// validName reports whether "<number>@<tenant>" is a name the renderer
// would give (so nothing else ever reaches a command line).
func validName(tenant, number string) bool {
	_, _, ok := naming.SplitCallcenterName(number + "@" + tenant)
	return ok
}
