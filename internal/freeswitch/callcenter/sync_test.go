package callcenter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/callcenter"
	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// nodeWithoutAgents answers as mod_callcenter does on a node that holds no
// agents yet: every tier add is refused with "-ERR Agent not found!".
type nodeWithoutAgents struct{ sent []string }

func (n *nodeWithoutAgents) Nodes() []esl.NodeStatus {
	return []esl.NodeStatus{{Name: "fs1", Up: true}}
}

func (n *nodeWithoutAgents) API(_ context.Context, node string, c command.Command) (string, error) {
	cmd := c.String()
	n.sent = append(n.sent, cmd)
	if strings.HasPrefix(cmd, "callcenter_config tier add ") {
		return "", &esl.CommandError{Node: node, Command: cmd, Reply: "-ERR Agent not found!\n"}
	}
	return "+OK\n", nil
}

// TestQueueChangeBeforeItsAgentReachesTheNode: a queue's change is handled
// after an agent of that queue was already written (the outbox delivers in
// order, so the agent's own change comes next). The queue's tier for that
// agent is refused by the node, which does not hold the agent yet; the
// queue must still count as applied, or its change is retried for ever and
// holds back the agent's change behind it.
func TestQueueChangeBeforeItsAgentReachesTheNode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		tenant := storetest.Name("cc")
		if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant}); err != nil {
			t.Fatal(err)
		}
		o, err := st.Tenant(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Create(ctx, st.Registry().Resource("extensions"), o, map[string]any{"name": "1001"}); err != nil {
			t.Fatal(err)
		}
		q, err := st.Create(ctx, st.Registry().Resource("queues"), o, map[string]any{"name": "sales", "number": "650"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Create(ctx, st.Registry().Resource("agents"), o, map[string]any{"name": "Cy", "agent_number": "41", "extension": "1001",
			"queues": []any{map[string]any{"queue_id": json.Number(fmt.Sprint(q["id"]))}}}); err != nil {
			t.Fatal(err)
		}
		after, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		node := &nodeWithoutAgents{}
		sync := callcenter.NewSync(node, st, "sip.example.com", nil)
		if err := sync.Handle(ctx, changes.Change{Resource: "queues", Tenant: tenant, After: after}); err != nil {
			t.Fatalf("queue change failed (it would be retried for ever): %v", err)
		}
		want := []string{"callcenter_config queue load 650@" + tenant, "callcenter_config tier add 650@" + tenant + " 41@" + tenant + " 1 1"}
		if strings.Join(node.sent, "\n") != strings.Join(want, "\n") {
			t.Errorf("node received\n%s\nwant\n%s", strings.Join(node.sent, "\n"), strings.Join(want, "\n"))
		}
	})
}
