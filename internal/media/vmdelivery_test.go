package media

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
)

// vmStub is one node's mod_voicemail reduced to what delivery reads: it
// records commands, files a message on vm_inject (unless lose is set) and
// lists it in vm_list's text form.
type vmStub struct {
	cmds  []string
	lines []string
	lose  bool
}

func (n *vmStub) Nodes() []esl.NodeStatus { return []esl.NodeStatus{{Name: "fs1", Up: true}} }

func (n *vmStub) API(_ context.Context, _ string, c command.Command) (string, error) {
	cmd := c.String()
	n.cmds = append(n.cmds, cmd)
	switch {
	case strings.HasPrefix(cmd, "vm_list "):
		return strings.Join(n.lines, ""), nil
	case strings.HasPrefix(cmd, "vm_inject "):
		if !n.lose {
			file := strings.Fields(cmd)[2]
			n.lines = append(n.lines, "1700000000:0:1001-acme:sip.test:inbox:/m/acme/voicemail/1001/msg_u-1_broadcast_"+file[strings.LastIndex(file, "/")+1:]+":u-1:x:y:2\n")
		}
		return "+OK\n", nil
	case strings.HasPrefix(cmd, "vm_read "):
		n.lines[0] = strings.Replace(n.lines[0], ":0:", ":1700000001:", 1)
		return "+OK\n", nil
	}
	return "-ERR unexpected\n", nil
}

func vmEvent(t *testing.T, d VoicemailDeliveryData) changes.Change {
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return changes.Change{ID: 7, Resource: VoicemailImported, Op: changes.Event, Tenant: "acme", After: b}
}

// TestVoicemailDeliveryCommands: the exact vm_inject line (box id, profile,
// node path, caller id with the name single-quoted and cleaned), nothing
// filed twice on redelivery, vm_read for a heard message, and an +OK that
// filed nothing is an error (so the dispatcher retries).
func TestVoicemailDeliveryCommands(t *testing.T) {
	node := &vmStub{}
	d := &VoicemailDelivery{Nodes: node, Domain: "sip.test", NodeDir: "/m/"}
	ev := vmEvent(t, VoicemailDeliveryData{ID: 1, ExternalID: "x", Mailbox: "1001", Path: "acme/voicemail-imports/abc.wav",
		CallerIDName: "Ann 'O' ${x}\\", CallerIDNumber: "+27825550001", Read: true})
	for range 2 {
		if err := d.Handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"vm_list 1001-acme@sip.test",
		"vm_inject 1001-acme@sip.test@default /m/acme/voicemail-imports/abc.wav +27825550001 'Ann O x'",
		"vm_list 1001-acme@sip.test",
		"vm_read 1001-acme@sip.test read u-1",
		"vm_list 1001-acme@sip.test", // the redelivery: already there and heard
	}
	if strings.Join(node.cmds, "\n") != strings.Join(want, "\n") {
		t.Fatalf("commands\n%s\nwant\n%s", strings.Join(node.cmds, "\n"), strings.Join(want, "\n"))
	}

	lost := &vmStub{lose: true}
	d.Nodes = lost
	if err := d.Handle(context.Background(), vmEvent(t, VoicemailDeliveryData{ID: 2, Mailbox: "1001", Path: "acme/voicemail-imports/def.wav"})); err == nil {
		t.Fatal("an inject that filed nothing passed")
	}
	if got := lost.cmds[1]; got != "vm_inject 1001-acme@sip.test@default /m/acme/voicemail-imports/def.wav anonymous" {
		t.Fatalf("inject %q", got)
	}
	// Unsafe parts are refused before any command.
	none := &vmStub{}
	d.Nodes = none
	for _, bad := range []VoicemailDeliveryData{{Mailbox: "1001", Path: "../etc/passwd"}, {Mailbox: "x y", Path: "acme/a.wav"}, {Mailbox: "1001", Path: "acme/a.wav", CallerIDNumber: "1 2"}} {
		if err := d.Handle(context.Background(), vmEvent(t, bad)); err == nil || len(none.cmds) != 0 {
			t.Fatalf("%+v: %v %q", bad, err, none.cmds)
		}
	}
}
