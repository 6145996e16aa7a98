// Package gateways keeps the sofia gateways of every connected FreeSWITCH
// node in step with the sip_trunks resource at run time. mod_sofia reads
// gateways from sofia.conf when a profile starts; afterwards
//
//   - "sofia profile external rescan" re-fetches sofia.conf (with
//     profile=external and reconfig=true) and adds the gateways the profile
//     does not hold, but leaves a gateway it holds untouched, changed or not;
//   - "sofia profile external killgw <name>" marks a gateway for deletion
//     (it unregisters and goes; a rescan may add its successor at once).
//
// So after each committed trunk change this outbox subscriber sends, to
// every connected node: killgw of the trunk's old name when it existed,
// then rescan when it still exists and is enabled. The node's own sofia.conf
// (rendered per node by sofiaconf.Sofia) decides what the rescan loads.
package gateways

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
)

// Profile is the sofia profile the trunks' gateways live on.
const Profile = "external"

// Nodes is what the sync needs of the node pool.
type Nodes = esl.Commander

// Sync is the outbox subscriber.
type Sync struct {
	nodes Nodes
	log   *slog.Logger
	// desired and ledger are set by WithResync (resync.go).
	desired Desired
	ledger  Ledger
	// mu serialises Handle and Resync, so a resync never undoes a change
	// applied meanwhile, nor records fingerprints read before it.
	mu sync.Mutex
}

// New returns the subscriber.
func New(nodes Nodes, log *slog.Logger) *Sync {
	if log == nil {
		log = slog.Default()
	}
	return &Sync{nodes: nodes, log: log}
}

// Name is the subscriber's stable name.
func (s *Sync) Name() string { return "freeswitch-gateways" }

// nameRe is the sip_trunks name pattern (also what parse_gateways accepts):
// nothing else ever reaches a command line.
var nameRe = regexp.MustCompile(`^[a-z0-9_]{1,40}$`)

type trunk struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
}

func decode(raw json.RawMessage) (*trunk, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var t trunk
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("gateways sync: decode change: %w", err)
	}
	if !nameRe.MatchString(t.Name) {
		return nil, nil
	}
	return &t, nil
}

// Commands are the mod_sofia commands that apply a committed sip_trunks
// change on a node, in order; nil for other changes. Every update kills
// and re-adds the gateway: a change's before and after never show the
// password, so an edit that changed only it looks like no change.
func Commands(c changes.Change) ([]command.Command, error) {
	if c.Resource != "sip_trunks" {
		return nil, nil
	}
	before, err := decode(c.Before)
	if err != nil {
		return nil, err
	}
	after, err := decode(c.After)
	if err != nil {
		return nil, err
	}
	var cmds []command.Command
	if before != nil {
		cmds = append(cmds, command.KillGateway(Profile, before.Name))
	}
	if after != nil && after.Enabled {
		cmds = append(cmds, command.Rescan(Profile))
	}
	return cmds, nil
}

// Handle applies one change on every node whose command connection is up
// (a node that is down gets it from Resync when it is back, resync.go),
// and records what each node was then given. The
// commands are safe to repeat, so a change that failed on one node is
// retried whole by the dispatcher.
func (s *Sync) Handle(ctx context.Context, c changes.Change) error {
	cmds, err := Commands(c)
	if err != nil || len(cmds) == 0 {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, n := range s.nodes.Nodes() {
		if !n.Up {
			continue
		}
		ok := true
		for _, cmd := range cmds {
			if err := s.send(ctx, n.Name, cmd); err != nil {
				errs = append(errs, err)
				ok = false
				break
			}
		}
		if ok {
			s.record(ctx, n.Name)
		}
	}
	return errors.Join(errs...)
}

// send runs one command and judges mod_sofia's reply: killgw of a gateway
// the node does not hold ("-ERR no such gateway.": a trunk pinned to other
// nodes, disabled, or already killed) is done; a rescan is done only when
// it says "+OK scan complete"; a node without the profile has nothing to do.
func (s *Sync) send(ctx context.Context, node string, cmd command.Command) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	reply, err := s.nodes.API(cctx, node, cmd)
	var ce *esl.CommandError
	if errors.As(err, &ce) {
		reply, err = ce.Reply, nil
	}
	if err != nil {
		return fmt.Errorf("gateways sync: %w", err)
	}
	reply = strings.TrimSpace(reply)
	switch {
	case strings.HasPrefix(reply, "Invalid Profile ["):
		s.log.Debug("gateways sync: node has no profile", "node", node, "profile", Profile)
		return nil
	case command.IsKillGateway(cmd) && (strings.HasPrefix(reply, "+OK") || reply == "-ERR no such gateway."):
		return nil
	case command.IsRescan(cmd) && strings.HasSuffix(reply, "+OK scan complete"):
		return nil
	}
	return fmt.Errorf("gateways sync: %s on %s: %q", cmd, node, reply)
}
