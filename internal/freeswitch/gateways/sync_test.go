package gateways_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/freeswitch/gateways"
)

func trunk(name string, enabled bool) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"name": name, "enabled": enabled, "host": "carrier.example"})
	return b
}

func TestCommands(t *testing.T) {
	const kill, rescan = "sofia profile external killgw ", "sofia profile external rescan"
	tests := []struct {
		name string
		c    changes.Change
		want []string
	}{
		{"create", changes.Change{Resource: "sip_trunks", Op: changes.Create, After: trunk("carrier", true)}, []string{rescan}},
		{"create disabled", changes.Change{Resource: "sip_trunks", Op: changes.Create, After: trunk("carrier", false)}, nil},
		{"edit", changes.Change{Resource: "sip_trunks", Op: changes.Update, Before: trunk("carrier", true), After: trunk("carrier", true)},
			[]string{kill + "carrier", rescan}},
		{"rename", changes.Change{Resource: "sip_trunks", Op: changes.Update, Before: trunk("old", true), After: trunk("new", true)},
			[]string{kill + "old", rescan}},
		{"disable", changes.Change{Resource: "sip_trunks", Op: changes.Update, Before: trunk("carrier", true), After: trunk("carrier", false)},
			[]string{kill + "carrier"}},
		{"delete", changes.Change{Resource: "sip_trunks", Op: changes.Delete, Before: trunk("carrier", true)}, []string{kill + "carrier"}},
		{"name not a gateway name", changes.Change{Resource: "sip_trunks", Op: changes.Delete, Before: trunk("a b", true)}, nil},
		{"other resource", changes.Change{Resource: "dids", Op: changes.Create, After: trunk("carrier", true)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmds, err := gateways.Commands(tt.c)
			var got []string
			for _, c := range cmds {
				got = append(got, c.String())
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("Commands = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// sofiaNode answers as mod_sofia 1.10 does (mod_sofia.c cmd_profile).
type sofiaNode struct {
	sent    []string
	replies map[string]string
}

func (n *sofiaNode) Nodes() []esl.NodeStatus {
	return []esl.NodeStatus{{Name: "fs1", Up: true}, {Name: "fs2", Up: false}}
}

func (n *sofiaNode) API(_ context.Context, node string, c command.Command) (string, error) {
	cmd := c.String()
	n.sent = append(n.sent, node+": "+cmd)
	for prefix, r := range n.replies {
		if strings.HasPrefix(cmd, prefix) {
			if strings.HasPrefix(r, "-ERR") {
				return "", &esl.CommandError{Node: node, Command: "api " + cmd, Reply: r}
			}
			return r, nil
		}
	}
	return "", &esl.CommandError{Node: node, Command: "api " + cmd, Reply: "-ERR sofia Command not found!\n"}
}

// TestHandleJudgesSofiaReplies: a killgw of a gateway the node does not
// hold is done, a rescan only when mod_sofia says "+OK scan complete" (its
// reply starts "Reload XML", so a failure is not an -ERR reply); a node
// that is down gets nothing.
func TestHandleJudgesSofiaReplies(t *testing.T) {
	edit := changes.Change{Resource: "sip_trunks", Op: changes.Update, Before: trunk("carrier", true), After: trunk("carrier", true)}
	for _, tt := range []struct {
		name    string
		replies map[string]string
		ok      bool
	}{
		{"applied", map[string]string{"sofia profile external killgw": "+OK gateway marked for deletion.\n",
			"sofia profile external rescan": "Reload XML [Success]\n+OK scan complete\n"}, true},
		{"gateway not held", map[string]string{"sofia profile external killgw": "-ERR no such gateway.\n",
			"sofia profile external rescan": "Reload XML [Success]\n+OK scan complete\n"}, true},
		{"no profile on the node", map[string]string{"sofia profile": "Invalid Profile [external]"}, true},
		{"rescan failed", map[string]string{"sofia profile external killgw": "+OK gateway marked for deletion.\n",
			"sofia profile external rescan": "Reload XML [Success]\n-ERR cannot find config for profile external\n"}, false},
		{"no mod_sofia", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := &sofiaNode{replies: tt.replies}
			err := gateways.New(n, nil).Handle(context.Background(), edit)
			if (err == nil) != tt.ok {
				t.Fatalf("Handle err = %v, want ok %v (sent %q)", err, tt.ok, n.sent)
			}
			for _, s := range n.sent {
				if strings.HasPrefix(s, "fs2:") {
					t.Errorf("sent to a node that is down: %s", s)
				}
			}
		})
	}
}
