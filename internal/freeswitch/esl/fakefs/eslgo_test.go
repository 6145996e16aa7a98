package fakefs

import (
	"github.com/switchboard/switchboard/internal/platform/racecheck"

	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/percipia/eslgo"
	"github.com/percipia/eslgo/command"
)

func TestEslgoAPIRoundTrip(t *testing.T) {
	s := startFake(t, Options{})
	c := mustESL(t, s.Addr())
	if got := eslAPI(t, c, "uuid_exists", "nope"); got != "false" {
		t.Errorf("uuid_exists = %q", got)
	}
	if got := eslAPI(t, c, "show", "channels as json"); got != "{\"row_count\": 0}\n" {
		t.Errorf("show channels = %q", got)
	}
	// eslgo writes "api status " with a trailing space; the fake records it
	// as sent and still answers.
	if got := eslAPI(t, c, "status", ""); !strings.Contains(got, "is ready") {
		t.Errorf("status = %q", got)
	}
	cmds := s.Commands()
	if cmds[0] != "auth ClueCon" || cmds[len(cmds)-1] != "api status " {
		t.Errorf("commands %q", cmds)
	}
}

func TestEslgoBgapiJobEvent(t *testing.T) {
	s := startFake(t, Options{})
	c := mustESL(t, s.Addr())
	subscribe(t, c, "BACKGROUND_JOB")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	r, err := c.SendCommand(ctx, command.API{Command: "originate", Arguments: "{origination_uuid=5c2a8f0e-8b1d-4c7e-9f3a-2b6d1e0a9c47}user/1000 &park()", Background: true})
	if err != nil {
		t.Fatal(err)
	}
	job := r.GetHeader("Job-UUID")
	if job == "" || r.GetReply() != "+OK Job-UUID: "+job {
		t.Fatalf("bgapi reply %q job %q", r.GetReply(), job)
	}
	got := make(chan *eslgo.Event, 1)
	c.RegisterEventListener(job, func(e *eslgo.Event) { got <- e })
	select {
	case e := <-got:
		if e.GetName() != "BACKGROUND_JOB" || e.GetHeader("Job-Command") != "originate" ||
			e.GetHeader("Job-Command-Arg") != "{origination_uuid=5c2a8f0e-8b1d-4c7e-9f3a-2b6d1e0a9c47}user/1000 &park()" {
			t.Errorf("job event %v", e)
		}
		if string(e.Body) != "+OK 5c2a8f0e-8b1d-4c7e-9f3a-2b6d1e0a9c47\n" {
			t.Errorf("job body %q", e.Body)
		}
	case <-ctx.Done():
		t.Fatal("no BACKGROUND_JOB")
	}
	ch, ok := s.Channel("5c2a8f0e-8b1d-4c7e-9f3a-2b6d1e0a9c47")
	if !ok || ch.App != "park" || ch.AnswerState != "answered" || ch.Name != "sofia/internal/1000" {
		t.Errorf("channel %+v", ch)
	}
}

func TestEslgoOriginateFailure(t *testing.T) {
	s := startFake(t, Options{})
	c := mustESL(t, s.Addr())
	col := newCollector(c)
	if err := c.EnableEvents(t.Context()); err != nil { // "event plain all"
		t.Fatal(err)
	}
	s.SetOriginateResult("USER_BUSY")
	if got := eslAPI(t, c, "originate", "{origination_uuid=a1,sb_tenant=acme}sofia/gateway/gw1/4477 &park()"); got != "-ERR USER_BUSY\n" {
		t.Fatalf("originate = %q", got)
	}
	evs := col.waitN(t, 5)
	var names []string
	for _, e := range evs {
		names = append(names, e.GetName())
	}
	if strings.Join(names, " ") != "CHANNEL_CREATE CHANNEL_PROGRESS CHANNEL_HANGUP CHANNEL_HANGUP_COMPLETE CHANNEL_DESTROY" {
		t.Fatalf("events %v", names)
	}
	hc := evs[3]
	if hc.GetHeader("Hangup-Cause") != "USER_BUSY" || hc.GetHeader("Variable_sb_tenant") != "acme" ||
		hc.GetHeader("Variable_hangup_cause_q850") != "17" || hc.GetHeader("Unique-Id") != "a1" {
		t.Errorf("hangup complete: %v", hc)
	}
	if len(s.Channels()) != 0 {
		t.Errorf("channels left: %+v", s.Channels())
	}
	// The failure is one-shot.
	if got := eslAPI(t, c, "originate", "sofia/gateway/gw1/4477 &park()"); !strings.HasPrefix(got, "+OK ") {
		t.Fatalf("second originate = %q", got)
	}
}

func TestEslgoCallControl(t *testing.T) {
	s := startFake(t, Options{})
	c := mustESL(t, s.Addr())
	col := newCollector(c)
	if _, err := s.CreateChannel(ChannelSpec{UUID: "in1", CIDName: "Alice Smith", CIDNum: "+15551234", Dest: "1001",
		Vars: []Header{{"sb_tenant", "acme"}, {"sb_ext", "1001"}}, Answer: true}); err != nil {
		t.Fatal(err)
	}
	subscribe(t, c, "CHANNEL_HOLD", "CHANNEL_UNHOLD", "RECORD_START", "RECORD_STOP", "CHANNEL_HANGUP_COMPLETE")
	tests := []struct {
		name, cmd, args, want, event string
	}{
		{"hold", "uuid_hold", "in1", "+OK Success\n", "CHANNEL_HOLD"},
		{"unhold", "uuid_hold", "off in1", "+OK Success\n", "CHANNEL_UNHOLD"},
		{"record start", "uuid_record", "in1 start /var/rec/acme/in1.wav", "+OK Success\n", "RECORD_START"},
		{"record stop", "uuid_record", "in1 stop /var/rec/acme/in1.wav", "+OK Success\n", "RECORD_STOP"},
		{"record stop again", "uuid_record", "in1 stop /var/rec/acme/in1.wav", "-ERR Cannot stop record session!\n", ""},
		{"getvar", "uuid_getvar", "in1 sb_tenant", "acme", ""},
		{"transfer", "uuid_transfer", "in1 2000 XML acme", "+OK\n", ""},
		{"exists", "uuid_exists", "in1", "true", ""},
		{"kill", "uuid_kill", "in1", "+OK\n", "CHANNEL_HANGUP_COMPLETE"},
		{"kill twice", "uuid_kill", "in1", "-ERR No such channel!\n", ""},
	}
	n := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := eslAPI(t, c, tt.cmd, tt.args); got != tt.want {
				t.Fatalf("%s %s = %q, want %q", tt.cmd, tt.args, got, tt.want)
			}
			if tt.event == "" {
				return
			}
			n++
			evs := col.waitN(t, n)
			e := evs[n-1]
			if e.GetName() != tt.event || e.GetHeader("Unique-Id") != "in1" {
				t.Fatalf("event %s %s, want %s", e.GetName(), e.GetHeader("Unique-Id"), tt.event)
			}
			if strings.HasPrefix(tt.event, "RECORD_") && e.GetHeader("Record-File-Path") != "/var/rec/acme/in1.wav" {
				t.Errorf("Record-File-Path %q", e.GetHeader("Record-File-Path"))
			}
			if tt.event == "CHANNEL_HANGUP_COMPLETE" {
				if e.GetHeader("Caller-Destination-Number") != "2000" || e.GetHeader("Caller-Context") != "acme" ||
					e.GetHeader("Caller-Caller-Id-Name") != "Alice Smith" || e.GetHeader("Hangup-Cause") != "NORMAL_CLEARING" {
					t.Errorf("hangup event %v", e)
				}
			}
		})
	}
}

func TestShowChannelsJSONShape(t *testing.T) {
	s := startFake(t, Options{Hostname: "fs7"})
	if _, err := s.CreateChannel(ChannelSpec{UUID: "u1", CIDNum: "1001", Dest: "2000", Context: "acme",
		Vars: []Header{{"accountcode", "acme"}}}); err != nil {
		t.Fatal(err)
	}
	c := mustESL(t, s.Addr())
	body := eslAPI(t, c, "show", "channels as json")
	var got struct {
		RowCount int                 `json:"row_count"`
		Rows     []map[string]string `json:"rows"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if got.RowCount != 1 || len(got.Rows) != 1 {
		t.Fatalf("rows %+v", got)
	}
	r := got.Rows[0]
	if len(r) != len(channelColumns) || r["uuid"] != "u1" || r["hostname"] != "fs7" || r["accountcode"] != "acme" ||
		r["dest"] != "2000" || r["context"] != "acme" || r["callstate"] != "DOWN" {
		t.Errorf("row %v", r)
	}
	if !strings.HasPrefix(body, `{"row_count":1,"rows":[{"uuid":"u1","direction":"inbound","created":`) {
		t.Errorf("key order: %s", body)
	}
}

func TestEslgoDisconnectOnClose(t *testing.T) {
	if racecheck.Enabled {
		// eslgo v1.5.2 runs its own Close on the disconnect notice, which
		// races its unlocked auth goroutine (see esl.release).
		t.Skip("skipped under -race: eslgo's own Close on a disconnect notice races inside eslgo")
	}
	s := startFake(t, Options{})
	gone := make(chan struct{})
	if _, err := dialESL(t, s.Addr(), "ClueCon", func() { close(gone) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gone:
	case <-time.After(3 * time.Second):
		t.Fatal("eslgo OnDisconnect not called after shutdown notice")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := dialESL(t, s.Addr(), "ClueCon", nil); err != nil {
		t.Fatalf("dial after restart: %v", err)
	}
}
