package gateways

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"slices"

	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/gateways/gwstate"
)

// A node whose command connection is down while a trunk is created,
// changed or deleted misses the change (Handle only reaches connected
// nodes), and mod_sofia would keep the old gateways until the profile
// restarts. Resync settles that when the node's connection comes (back)
// up: it reads the gateways the node holds ("sofia xmlstatus gateway"),
// compares them with the gateways the node's own sofia.conf renders now,
// kills the ones that are gone or changed and rescans.
//
// How a changed gateway is told from an unchanged one: by a fingerprint
// (SHA-256 of the rendered <gateway> element, every param and variable)
// of what each node was last given, kept in node_gateways. Comparing what
// the node reports is not enough: xmlstatus shows realm, username, proxy,
// from and the register state, but the password only as yes/no and none
// of the codecs, DTMF mode, caller-id-in-from or transport variables, so
// an edit of those would go unseen; and it would tie the comparison to
// how parse_gateways derives each field. The fingerprint covers every
// byte the node reads, and the row is written only after the node was
// given that version (Handle's or Resync's rescan succeeded).
//
// A gateway the node holds with no stored fingerprint (first run after an
// upgrade, a node first seen) is taken as current and its fingerprint
// recorded: killing it would drop its registration and calls for nothing
// in the usual case. A node whose FreeSWITCH restarted while away loaded
// the current sofia.conf already; its gateways that changed meanwhile are
// killed and re-added once more, which costs a re-registration only.

// Desired returns, for a node, the gateways its external profile should
// hold: name -> fingerprint (Fingerprints of the node's sofia.conf).
type Desired func(ctx context.Context, node string) (map[string]string, error)

// Ledger keeps, per node, the fingerprints of the gateways it was given.
type Ledger interface {
	Given(ctx context.Context, node string) (map[string]string, error)
	SetGiven(ctx context.Context, node string, gws map[string]string) error
}

// WithResync enables Resync, and makes Handle record what each node was
// given. Call before the subscriber runs.
func (s *Sync) WithResync(desired Desired, ledger Ledger) *Sync {
	s.desired, s.ledger = desired, ledger
	return s
}

// Fingerprints reads a rendered sofia.conf and returns the gateways of
// profile: name -> hex SHA-256 of the gateway element's content.
func Fingerprints(sofiaConf []byte, profile string) (map[string]string, error) {
	var doc struct {
		Sections []struct {
			Configurations []struct {
				Name     string `xml:"name,attr"`
				Profiles []struct {
					Name     string `xml:"name,attr"`
					Gateways []struct {
						Name  string `xml:"name,attr"`
						Inner []byte `xml:",innerxml"`
					} `xml:"gateways>gateway"`
				} `xml:"profiles>profile"`
			} `xml:"configuration"`
		} `xml:"section"`
	}
	if err := xml.Unmarshal(sofiaConf, &doc); err != nil {
		return nil, fmt.Errorf("gateways: read sofia.conf: %w", err)
	}
	out := map[string]string{}
	for _, sec := range doc.Sections {
		for _, c := range sec.Configurations {
			if c.Name != "sofia.conf" {
				continue
			}
			for _, p := range c.Profiles {
				if p.Name != profile {
					continue
				}
				for _, g := range p.Gateways {
					if nameRe.MatchString(g.Name) {
						sum := sha256.Sum256(append([]byte(g.Name+"\n"), g.Inner...))
						out[g.Name] = hex.EncodeToString(sum[:])
					}
				}
			}
		}
	}
	return out, nil
}

// Held returns the names of the gateways on profile in an answer of
// "sofia xmlstatus gateway" (read by gwstate.ParseStatus).
func Held(reply, profile string) ([]string, error) {
	gws, err := gwstate.ParseStatus(reply)
	if err != nil {
		return nil, fmt.Errorf("gateways: %w", err)
	}
	var out []string
	for _, g := range gws {
		if g.Profile == profile {
			out = append(out, g.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Resync makes node's external profile hold exactly the gateways its
// sofia.conf renders now (called when the node's command connection comes
// up). Gateways that are unchanged are left alone.
func (s *Sync) Resync(ctx context.Context, node string) error {
	if s.desired == nil || s.ledger == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want, err := s.desired(ctx, node)
	if err != nil {
		return fmt.Errorf("gateways resync %s: %w", node, err)
	}
	given, err := s.ledger.Given(ctx, node)
	if err != nil {
		return fmt.Errorf("gateways resync %s: %w", node, err)
	}
	reply, err := s.nodes.API(ctx, node, command.GatewayStatus())
	if err != nil {
		return fmt.Errorf("gateways resync %s: %w", node, err)
	}
	held, err := Held(reply, Profile)
	if err != nil {
		return fmt.Errorf("gateways resync %s: %w", node, err)
	}
	kill, rescan := Plan(held, given, want)
	var cmds []command.Command
	for _, name := range kill {
		cmds = append(cmds, command.KillGateway(Profile, name))
	}
	if rescan {
		cmds = append(cmds, command.Rescan(Profile))
	}
	for _, cmd := range cmds {
		if err := s.send(ctx, node, cmd); err != nil {
			return err
		}
	}
	s.log.Info("gateways resynced", "node", node, "killed", kill, "rescan", rescan)
	return s.ledger.SetGiven(ctx, node, want)
}

// Plan is the resync's decision: the held gateways to kill (not wanted any
// more, or wanted with another fingerprint than the node was given) and
// whether to rescan (a wanted gateway is missing or was killed). A held
// gateway with no given fingerprint is taken as current.
func Plan(held []string, given, want map[string]string) (kill []string, rescan bool) {
	holds := map[string]bool{}
	for _, name := range held {
		holds[name] = true
		fp, wanted := want[name]
		old, known := given[name]
		if !wanted || known && old != fp {
			kill = append(kill, name)
			holds[name] = false
		}
	}
	for name := range want {
		if !holds[name] {
			rescan = true
		}
	}
	return kill, rescan
}

// record notes, after Handle applied a change on node, what the node was
// given. A failure only means the next resync may kill and re-add.
func (s *Sync) record(ctx context.Context, node string) {
	if s.desired == nil || s.ledger == nil {
		return
	}
	want, err := s.desired(ctx, node)
	if err == nil {
		err = s.ledger.SetGiven(ctx, node, want)
	}
	if err != nil {
		s.log.Warn("gateways: given gateways not recorded", "node", node, "error", err)
	}
}
