package fakefs

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAuthExactBytes(t *testing.T) {
	s := startFake(t, Options{})
	rc := dialRaw(t, s.Addr())
	if got := rc.readN(len("Content-Type: auth/request\n\n")); got != "Content-Type: auth/request\n\n" {
		t.Fatalf("greeting %q", got)
	}
	rc.send("api status\n\n")
	want := "Content-Type: command/reply\nReply-Text: -ERR command not found\n\n"
	if got := rc.readN(len(want)); got != want {
		t.Fatalf("before auth: %q", got)
	}
	rc.send("auth ClueCon\r\n\r\n")
	want = "Content-Type: command/reply\nReply-Text: +OK accepted\n\n"
	if got := rc.readN(len(want)); got != want {
		t.Fatalf("auth reply %q", got)
	}
}

func TestWrongPasswordDisconnects(t *testing.T) {
	s := startFake(t, Options{Password: "s3cret"})
	rc := dialRaw(t, s.Addr())
	rc.frame()
	rc.send("auth ClueCon\n\n")
	want := "Content-Type: command/reply\nReply-Text: -ERR invalid\n\n" +
		"Content-Type: text/disconnect-notice\nContent-Length: 67\n\n" +
		"Disconnected, goodbye.\nSee you at ClueCon! http://www.cluecon.com/\n"
	if got := rc.readN(len(want)); got != want {
		t.Fatalf("got %q", got)
	}
	_ = rc.c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := rc.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("after bad auth: %v, want EOF", err)
	}

	if _, err := dialESL(t, s.Addr(), "ClueCon", nil); err == nil {
		t.Fatal("eslgo dial with wrong password succeeded")
	}
	if _, err := dialESL(t, s.Addr(), "s3cret", nil); err != nil {
		t.Fatalf("eslgo dial with right password: %v", err)
	}
}

func TestSubscriptionReplies(t *testing.T) {
	s := startFake(t, Options{})
	rc := dialAuthed(t, s.Addr())
	tests := []struct {
		name, cmd, want string
	}{
		{"noevents before any", "noevents", "-ERR not listening for events"},
		{"event without names", "event plain", "-ERR no keywords supplied"},
		{"event plain list", "event plain CHANNEL_CREATE channel_answer", "+OK event listener enabled plain"},
		{"event default format", "event CHANNEL_HANGUP", "+OK event listener enabled plain"},
		{"nixevent", "nixevent CHANNEL_CREATE", "+OK events nixed"},
		{"filter", "filter Unique-ID abc", "+OK filter added. [Unique-ID]=[abc]"},
		{"filter delete", "filter delete Unique-ID abc", "+OK filter deleted. [Unique-ID][abc]"},
		{"linger inbound", "linger", "-ERR not controlling a session"},
		{"unknown", "frobnicate", "-ERR command not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rc.command(tt.cmd); got != tt.want {
				t.Errorf("%s: %q, want %q", tt.cmd, got, tt.want)
			}
		})
	}
	conns := s.Conns()
	if len(conns) != 1 || strings.Join(conns[0].Events, " ") != "CHANNEL_ANSWER CHANNEL_HANGUP" {
		t.Fatalf("conns %+v", conns)
	}
	if got := rc.command("noevents"); got != "+OK no longer listening for events" {
		t.Errorf("noevents: %q", got)
	}
	rc.send("exit\n\n")
	want := "Content-Type: command/reply\nReply-Text: +OK bye\n\n" +
		"Content-Type: text/disconnect-notice\nContent-Length: 67\n\n"
	if got := rc.readN(len(want)); got != want {
		t.Fatalf("exit: %q", got)
	}
}

func TestAPIReplies(t *testing.T) {
	s := startFake(t, Options{})
	rc := dialAuthed(t, s.Addr())
	tests := []struct {
		name, cmd, want string
	}{
		{"unknown command", "foo bar", "-ERR foo Command not found!\n"},
		{"uuid_exists unknown", "uuid_exists 5c2a8f0e-8b1d-4c7e-9f3a-2b6d1e0a9c47", "false"},
		{"zero channels json", "show channels as json", "{\"row_count\": 0}\n"},
		{"uuid_kill unknown", "uuid_kill nope", "-ERR No such channel!\n"},
		{"uuid_transfer unknown", "uuid_transfer nope 1000 XML default", "-ERR No such channel!\n"},
		{"uuid_record unknown", "uuid_record nope start /tmp/x.wav", "-ERR Cannot locate session!\n"},
		{"uuid_hold unknown", "uuid_hold nope", "-ERR Operation failed\n"},
		{"xml_flush_cache", "xml_flush_cache", "+OK cleared 0 entries\n"},
		{"reloadxml", "reloadxml", "+OK [Success]\n"},
		{"originate usage", "originate user/1000", originateUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rc.api(tt.cmd); got != tt.want {
				t.Errorf("api %s = %q, want %q", tt.cmd, got, tt.want)
			}
		})
	}
	if got := rc.api("status"); !strings.Contains(got, "is ready\n") {
		t.Errorf("status: %q", got)
	}
	s.SetAPIReply("sofia status", "custom\n")
	if got := rc.api("sofia status gateway"); got != "custom\n" {
		t.Errorf("scripted reply: %q", got)
	}
}

func TestBgapiHonoursJobUUIDHeader(t *testing.T) {
	s := startFake(t, Options{})
	rc := dialAuthed(t, s.Addr())
	rc.command("event plain BACKGROUND_JOB")
	rc.send("bgapi uuid_exists abc\nJob-UUID: 7f4db78a-17d7-11dd-b7a0-db4edd065621\n\n")
	want := "Content-Type: command/reply\nReply-Text: +OK Job-UUID: 7f4db78a-17d7-11dd-b7a0-db4edd065621\n" +
		"Job-UUID: 7f4db78a-17d7-11dd-b7a0-db4edd065621\n\n"
	if got := rc.readN(len(want)); got != want {
		t.Fatalf("bgapi reply %q", got)
	}
	h, body := rc.event()
	checks := map[string]string{
		"Event-Name": "BACKGROUND_JOB", "Job-Uuid": "7f4db78a-17d7-11dd-b7a0-db4edd065621",
		"Job-Owner-Uuid": "_undef_", "Job-Command": "uuid_exists", "Job-Command-Arg": "abc",
		"Freeswitch-Hostname": "fs1",
	}
	for k, v := range checks {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if body != "false" {
		t.Errorf("job body %q", body)
	}
	if got := s.Commands(); got[len(got)-1] != "bgapi uuid_exists abc" {
		t.Errorf("recorded %q", got)
	}
}

func TestEventsOnWireInSequenceOrder(t *testing.T) {
	s := startFake(t, Options{})
	rc := dialAuthed(t, s.Addr())
	rc.command("event plain ALL")
	rc.command("nixevent CHANNEL_DESTROY")
	body := rc.api("originate {origination_uuid=aaaa,sb_tenant=acme}sofia/gateway/gw1/447700900123 &bridge({origination_uuid=bbbb}sofia/gateway/gw1/442071234567)")
	if body != "+OK aaaa\n" {
		t.Fatalf("originate: %q", body)
	}
	want := []string{
		"CHANNEL_CREATE aaaa", "CHANNEL_PROGRESS aaaa", "CHANNEL_ANSWER aaaa",
		"CHANNEL_CREATE bbbb", "CHANNEL_PROGRESS bbbb", "CHANNEL_ANSWER bbbb", "CHANNEL_BRIDGE aaaa",
	}
	last := 0
	for i, w := range want {
		h, _ := rc.event()
		if got := h.Get("Event-Name") + " " + h.Get("Unique-Id"); got != w {
			t.Fatalf("event %d = %q, want %q", i, got, w)
		}
		seq, _ := strconv.Atoi(h.Get("Event-Sequence"))
		if seq <= last {
			t.Fatalf("Event-Sequence %d after %d", seq, last)
		}
		last = seq
		if h.Get("Variable_sb_tenant") != "acme" && strings.HasSuffix(w, "aaaa") {
			t.Errorf("%s: variable_sb_tenant = %q", w, h.Get("Variable_sb_tenant"))
		}
		if strings.HasSuffix(w, "bbbb") && h.Get("Other-Leg-Unique-Id") != "aaaa" {
			t.Errorf("%s: Other-Leg-Unique-ID = %q", w, h.Get("Other-Leg-Unique-Id"))
		}
		if w == "CHANNEL_BRIDGE aaaa" && (h.Get("Bridge-A-Unique-Id") != "aaaa" || h.Get("Bridge-B-Unique-Id") != "bbbb") {
			t.Errorf("bridge headers %v", h)
		}
	}
	if got := rc.api("uuid_kill bbbb USER_BUSY"); got != "+OK\n" {
		t.Fatalf("uuid_kill: %q", got)
	}
	want = []string{
		"CHANNEL_UNBRIDGE aaaa", "CHANNEL_HANGUP bbbb", "CHANNEL_HANGUP aaaa",
		"CHANNEL_HANGUP_COMPLETE bbbb", "CHANNEL_HANGUP_COMPLETE aaaa",
	}
	for i, w := range want {
		h, _ := rc.event()
		if got := h.Get("Event-Name") + " " + h.Get("Unique-Id"); got != w {
			t.Fatalf("hangup event %d = %q, want %q", i, got, w)
		}
		if strings.HasPrefix(w, "CHANNEL_HANGUP") && (h.Get("Hangup-Cause") != "USER_BUSY" || h.Get("Variable_hangup_cause") != "USER_BUSY") {
			t.Errorf("%s: cause %q / %q", w, h.Get("Hangup-Cause"), h.Get("Variable_hangup_cause"))
		}
	}
	if n := len(s.Channels()); n != 0 {
		t.Errorf("%d channels left", n)
	}
}

func TestWaitCommandReturnsSuccessiveMatches(t *testing.T) {
	s := startFake(t, Options{})
	rc := dialAuthed(t, s.Addr())
	rc.api("uuid_kill one")
	go func() { time.Sleep(20 * time.Millisecond); rc.send("api uuid_kill two\n\n") }()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	for _, want := range []string{"api uuid_kill one", "api uuid_kill two"} {
		got, err := s.WaitCommand(ctx, "api uuid_kill")
		if err != nil || got != want {
			t.Fatalf("WaitCommand = %q, %v; want %q", got, err, want)
		}
	}
	short, cancel2 := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel2()
	if _, err := s.WaitCommand(short, "api uuid_kill"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third WaitCommand: %v", err)
	}
}

func TestCloseSendsShutdownNoticeAndRestart(t *testing.T) {
	s := startFake(t, Options{})
	rc := dialAuthed(t, s.Addr())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	h, body := rc.frame()
	if h.Get("Content-Type") != "text/disconnect-notice" || body != "The system is being shut down.\n" {
		t.Fatalf("notice %v %q", h, body)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	dialAuthed(t, s.Addr()) // the restarted switch takes the password again
}

func TestJSONEvents(t *testing.T) {
	s := startFake(t, Options{})
	rc := dialAuthed(t, s.Addr())
	if got := rc.command("event json CHANNEL_CREATE"); got != "+OK event listener enabled json" {
		t.Fatal(got)
	}
	if _, err := s.CreateChannel(ChannelSpec{UUID: "u1", CIDName: "Zoë Smith", CIDNum: "1001", Dest: "2000"}); err != nil {
		t.Fatal(err)
	}
	h, body := rc.frame()
	if h.Get("Content-Type") != "text/event-json" || strings.Contains(body, "\n") {
		t.Fatalf("frame %v %q", h, body)
	}
	if !strings.Contains(body, `"Caller-Caller-ID-Name":"Zoë Smith"`) || !strings.Contains(body, `"Unique-ID":"u1"`) {
		t.Errorf("json event %s", body)
	}
}

// TestSlowConsumerIsDroppedWithoutStallingTheServer: a subscriber that
// stops reading overflows its queue; the fake drops that connection and
// keeps serving everyone else (it used to deadlock on its own lock).
func TestSlowConsumerIsDroppedWithoutStallingTheServer(t *testing.T) {
	srv := startFake(t, Options{})
	slow := dialAuthed(t, srv.Addr())
	slow.command("event plain ALL")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20000; i++ {
			srv.EmitEvent("CUSTOM", []Header{{Name: "Event-Subclass", Value: "test::flood"}, {Name: "Pad", Value: strings.Repeat("x", 512)}}, "")
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("emitting events stalled behind a slow consumer")
	}
	other := dialAuthed(t, srv.Addr())
	if got := other.api("status"); !strings.Contains(got, "is ready") {
		t.Fatalf("server stopped answering: %q", got)
	}
}

// TestCommandFramingLikeReadPacket sends the same bgapi in the three
// framings seen on a real FreeSWITCH: all-LF and all-CRLF messages run the
// command under the Job-UUID sent; a message whose only CRs are in its
// final CRLF CRLF (what "bgapi X\nJob-UUID: Y" becomes through eslgo) runs
// X with the header text appended and a Job-UUID of the switch's own.
func TestCommandFramingLikeReadPacket(t *testing.T) {
	const job = "7f4db78a-17d7-11dd-b7a0-db4edd065621"
	cases := []struct {
		name, msg, wantBody string
		ownJob              bool
	}{
		{"all LF", "bgapi echo hello\nJob-UUID: " + job + "\n\n", "hello", true},
		{"all CRLF", "bgapi echo hello\r\nJob-UUID: " + job + "\r\n\r\n", "hello", true},
		{"LF then CRLF CRLF", "bgapi echo hello\nJob-UUID: " + job + "\r\n\r\n", "hello\nJob-UUID: " + job, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startFake(t, Options{})
			rc := dialAuthed(t, s.Addr())
			rc.command("event plain BACKGROUND_JOB")
			rc.send(tc.msg)
			h, _ := rc.frame()
			got := h.Get("Job-Uuid")
			if (got == job) != tc.ownJob || got == "" || h.Get("Reply-Text") != "+OK Job-UUID: "+got {
				t.Fatalf("reply Job-UUID %q (Reply-Text %q), sent %q", got, h.Get("Reply-Text"), job)
			}
			eh, body := rc.event()
			if eh.Get("Job-Uuid") != got || body != tc.wantBody {
				t.Errorf("job %q body %q, want %q under %q", eh.Get("Job-Uuid"), body, tc.wantBody, got)
			}
		})
	}
}
