package messaging_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/comms/messaging"
	"github.com/switchboard/switchboard/internal/comms/messaging/providertest"
)

// A transient failure is retried with growing delays; after MaxAttempts
// the message fails with the provider's last code.
func TestRetriesWithBackoffThenGivesUp(t *testing.T) {
	e := newEnv(t)
	svc := e.service(messaging.Config{MaxAttempts: 3, BackoffBase: 50 * time.Millisecond, BackoffMax: time.Second})
	ch := e.twilioSMS(t, nil)
	for i := 0; i < 5; i++ {
		e.twilio.FailNext(providertest.Fault{Status: 503, Code: 20500, Message: "Service unavailable"})
	}
	m := e.send(t, svc, messaging.SendRequest{ChannelID: ch, To: "+27825550001", Body: ptr("hi")})
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := svc.DrainOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := e.message(t, svc, m.ID); got.Status == messaging.StatusFailed {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	got := e.message(t, svc, m.ID)
	at := e.twilio.RequestTimes()
	if got.Status != messaging.StatusFailed || got.Attempts != 3 || got.ErrorCode != "20500" || len(at) != 3 {
		t.Fatalf("after retries: status %s attempts %d code %q (%d requests)", got.Status, got.Attempts, got.ErrorCode, len(at))
	}
	// Backoff 50ms then 100ms, less at most half of it (backoff.Delay's
	// jitter), between the provider seeing one attempt and the next.
	if gap1, gap2 := at[1].Sub(at[0]), at[2].Sub(at[1]); gap1 < 25*time.Millisecond || gap2 < 50*time.Millisecond {
		t.Errorf("backoff gaps %v then %v, want ≥ 25ms then ≥ 50ms", gap1, gap2)
	}
	if n := outboxRows(t, e.st); n != 0 {
		t.Errorf("a failed message stays in the outbox (%d rows)", n)
	}
}

// rate_per_second holds across the worker: no second sees more sends than
// the channel allows, and every message still goes out.
func TestChannelRateLimit(t *testing.T) {
	e := newEnv(t)
	svc := e.service(messaging.Config{Poll: 20 * time.Millisecond})
	ch := e.twilioSMS(t, map[string]any{"rate_per_second": jsonNum(2)})
	const n = 5
	for i := 0; i < n; i++ {
		e.send(t, svc, messaging.SendRequest{ChannelID: ch, To: "+27825550001", Body: ptr("hi " + strconv.Itoa(i))})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Run(ctx); close(done) }()
	stamps := map[int64]int{}
	var order []int64
	deadline := time.Now().Add(6 * time.Second)
	for len(e.twilio.Accepted()) < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	acc := e.twilio.Accepted()
	if len(acc) != n {
		t.Fatalf("%d of %d sent within the deadline", len(acc), n)
	}
	// The limit counts slots per second of the worker's clock when it takes
	// them; the provider sees each request a moment later, so a request
	// whose slot was the end of one second may arrive in the next: a
	// provider's second holds at most rate+1 requests, and the five
	// requests span more than a second (two full seconds of slots), where
	// unlimited they would all go at once.
	times := e.twilio.RequestTimes()
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	for _, at := range times {
		sec := at.Unix()
		if stamps[sec] == 0 {
			order = append(order, sec)
		}
		stamps[sec]++
	}
	for _, sec := range order {
		if stamps[sec] > 3 {
			t.Errorf("second %d saw %d sends, rate is 2/s", sec, stamps[sec])
		}
	}
	if span := times[len(times)-1].Sub(times[0]); span < 800*time.Millisecond {
		t.Errorf("5 messages at 2/s went out within %v, want over a second", span)
	}
}

// A restart in the middle of a drain loses nothing and sends nothing
// twice; a replica that died holding leases delays its messages only until
// the leases expire.
func TestOutboxSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	ch := e.twilioSMS(t, nil)
	first := e.service(messaging.Config{Batch: 5, Concurrency: 2, Replica: "first"})
	const n = 40
	for i := 0; i < n; i++ {
		e.send(t, first, messaging.SendRequest{ChannelID: ch, To: "+27825550001", Body: ptr("m" + strconv.Itoa(i))})
	}
	// The first process stops after a few sends (SIGTERM: in-flight sends finish).
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { first.Run(ctx); close(done) }()
	for len(e.twilio.Accepted()) < 7 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	sentBefore := len(e.twilio.Accepted())
	if sentBefore >= n {
		t.Fatalf("the first process sent everything (%d) before stopping; the test needs a partial drain", sentBefore)
	}

	// A replica that crashed holds leases on three more messages.
	// (an hour: the drain below must not outlast it on a loaded machine;
	// the test then lets it run out by moving it into the past)
	lease := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000000Z")
	res, err := e.st.Querier().ExecContext(context.Background(), `UPDATE messaging_outbox SET lease_owner = 'crashed', lease_until = ? WHERE message_id IN (SELECT message_id FROM messaging_outbox ORDER BY message_id LIMIT 3)`, lease)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := res.RowsAffected(); k != 3 {
		t.Fatalf("leased %d rows", k)
	}

	second := e.service(messaging.Config{Replica: "second"})
	drain(t, second)
	if got := len(e.twilio.Accepted()); got != n-3 {
		t.Fatalf("after restart %d sent, want %d (leased ones wait)", got, n-3)
	}
	expired := time.Now().Add(-time.Second).UTC().Format("2006-01-02T15:04:05.000000Z")
	if _, err := e.st.Querier().ExecContext(context.Background(), `UPDATE messaging_outbox SET lease_until = ? WHERE lease_owner = 'crashed'`, expired); err != nil {
		t.Fatal(err)
	}
	drain(t, second)

	perMessage := map[string]int{}
	for _, a := range e.twilio.Accepted() {
		u, _ := url.Parse(a.StatusCallback)
		perMessage[u.Query().Get("message_id")]++
	}
	if len(perMessage) != n {
		t.Errorf("%d distinct messages sent, want %d", len(perMessage), n)
	}
	for id, k := range perMessage {
		if k != 1 {
			t.Errorf("message %s sent %d times", id, k)
		}
	}
	if k := outboxRows(t, e.st); k != 0 {
		t.Errorf("%d outbox rows left", k)
	}
}

// Two replicas draining one outbox at once send each message exactly once.
func TestTwoReplicasSendEachMessageOnce(t *testing.T) {
	e := newEnv(t)
	ch := e.twilioSMS(t, nil)
	a := e.service(messaging.Config{Replica: "a", Batch: 7, Poll: 5 * time.Millisecond})
	b := e.service(messaging.Config{Replica: "b", Batch: 7, Poll: 5 * time.Millisecond})
	const n = 60
	for i := 0; i < n; i++ {
		e.send(t, a, messaging.SendRequest{ChannelID: ch, To: "+27825550001", Body: ptr("m" + strconv.Itoa(i))})
	}
	ctx, cancel := context.WithCancel(context.Background())
	doneA, doneB := make(chan struct{}), make(chan struct{})
	go func() { a.Run(ctx); close(doneA) }()
	go func() { b.Run(ctx); close(doneB) }()
	deadline := time.Now().Add(10 * time.Second)
	for outboxRows(t, e.st) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-doneA
	<-doneB
	seen := map[string]int{}
	for _, acc := range e.twilio.Accepted() {
		u, _ := url.Parse(acc.StatusCallback)
		seen[u.Query().Get("message_id")]++
	}
	if len(seen) != n || len(e.twilio.Accepted()) != n {
		t.Fatalf("%d sends of %d distinct messages, want %d each once", len(e.twilio.Accepted()), len(seen), n)
	}
}

// Servers that share a database without being replicas of one installation
// (test servers, each with its own provider endpoints) are kept apart by
// their outbox group: a worker sends only its own group's messages.
func TestWorkerSendsOnlyItsGroupsMessages(t *testing.T) {
	e := newEnv(t)
	ch := e.twilioSMS(t, nil)
	a := e.service(messaging.Config{Replica: "a", Group: "group-a", Poll: 5 * time.Millisecond})
	otherTwilio := providertest.NewTwilio(testSid, testToken)
	t.Cleanup(otherTwilio.Close)
	b := messaging.New(e.st, e.rdb, messaging.Config{Replica: "b", Group: "group-b", Poll: 5 * time.Millisecond,
		BaseURL: "https://sb.example.net", Providers: messaging.Providers{Twilio: otherTwilio.URL},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	m := e.send(t, a, messaging.SendRequest{ChannelID: ch, To: "+27825550001", Body: ptr("group a's")})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.Run(ctx); close(done) }()
	time.Sleep(500 * time.Millisecond) // b would have claimed it by now
	cancel()
	<-done
	if n := len(otherTwilio.Accepted()); n != 0 {
		t.Fatalf("the other group's worker sent %d messages", n)
	}
	if got := e.message(t, a, m.ID); got.Status != messaging.StatusQueued || got.Attempts != 0 {
		t.Fatalf("after the other group's worker: %s, %d attempts", got.Status, got.Attempts)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go a.Run(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for outboxRows(t, e.st) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(e.twilio.Accepted()); n != 1 {
		t.Fatalf("its own group's worker sent %d messages, want 1", n)
	}
}
