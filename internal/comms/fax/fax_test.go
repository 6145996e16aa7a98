package fax_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/comms/fax"
	"github.com/switchboard/switchboard/internal/comms/fax/faxtest"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

func TestTIFFPages(t *testing.T) {
	for _, tt := range []struct {
		name  string
		b     []byte
		pages int
	}{
		{"intel one page", faxtest.TIFF(1, false, 100), 1},
		{"motorola three pages", faxtest.TIFF(3, true, 0), 3},
	} {
		if n, err := fax.TIFFPages(tt.b); err != nil || n != tt.pages {
			t.Errorf("%s: %d pages, %v", tt.name, n, err)
		}
	}
	loop := faxtest.TIFF(2, false, 0)
	copy(loop[len(loop)-4:], []byte{8, 0, 0, 0}) // the last page points back at the first
	for name, b := range map[string][]byte{
		"pdf":           []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj"),
		"text":          []byte("hello fax"),
		"truncated":     faxtest.TIFF(2, false, 0)[:20],
		"looping chain": loop,
		"wrong magic":   append([]byte("II\x2b\x00"), faxtest.TIFF(1, false, 0)[4:]...),
		"empty":         nil,
	} {
		if _, err := fax.TIFFPages(b); !errors.Is(err, fax.ErrNotTIFF) {
			t.Errorf("%s accepted: %v", name, err)
		}
	}
}

// faxEnv is a database with a tenant and its fax_to_email endpoint.
type faxEnv struct {
	st       *models.Store
	tenant   string
	endpoint int64
	dir      string
}

func newFaxEnv(t *testing.T, st *models.Store) faxEnv {
	t.Helper()
	ctx := context.Background()
	name := storetest.Name("fax")
	if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": name}); err != nil {
		t.Fatal(err)
	}
	owner, err := st.Tenant(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Create(ctx, st.Registry().Resource("special_endpoints"), owner, map[string]any{
		"name": "Fax", "number": "957", "kind": "application", "application": "fax_to_email", "fax_email": "office@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return faxEnv{st: st, tenant: name, endpoint: recID(t, rec), dir: t.TempDir()}
}

func recID(t *testing.T, rec models.Record) int64 {
	t.Helper()
	switch v := rec["id"].(type) {
	case int64:
		return v
	case int:
		return int64(v)
	}
	t.Fatalf("record id %T", rec["id"])
	return 0
}

func (e faxEnv) service(t *testing.T, smtpURL string, cfg fax.Config) *fax.Service {
	t.Helper()
	if smtpURL != "" {
		c, err := fax.ParseSMTP(smtpURL, "switchboard@example.com")
		if err != nil {
			t.Fatal(err)
		}
		c.Timeout = 5 * time.Second
		cfg.SMTP = c
	}
	cfg.Dir = e.dir
	return fax.New(e.st, cfg)
}

// status reads the delivery row as the worker left it.
func (e faxEnv) status(t *testing.T, call string) (status string, attempts int, lastError string) {
	t.Helper()
	err := e.st.Querier().QueryRowContext(context.Background(), e.st.Querier().Rebind(`SELECT status, attempts, last_error FROM fax_deliveries WHERE call_uuid = ?`), call).Scan(&status, &attempts, &lastError)
	if err != nil {
		t.Fatal(err)
	}
	return
}

// attachment parses an accepted message and returns its TIFF attachment.
func attachment(t *testing.T, m faxtest.Mail) (*mail.Message, []byte) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" {
		t.Fatalf("content type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	var tiff []byte
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if disp, dp, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition")); disp == "attachment" {
			if ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); ct != "image/tiff" || !strings.HasSuffix(dp["filename"], ".tif") || p.Header.Get("Content-Transfer-Encoding") != "base64" {
				t.Fatalf("attachment headers %v", p.Header)
			}
			raw, _ := io.ReadAll(p)
			tiff, err = decodeBase64Lines(raw)
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return msg, tiff
}

// TestFaxEmailedAsAttachmentOnce: an uploaded fax is stored and e-mailed,
// through AUTH PLAIN on a real SMTP relay, to the endpoint's fax_email with
// the TIFF attached byte for byte; the same call uploaded again is not
// sent twice.
func TestFaxEmailedAsAttachmentOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newFaxEnv(t, st)
		relay := faxtest.Start(t, "127.0.0.1:0")
		svc := e.service(t, relay.URL(), fax.Config{})
		ctx := context.Background()
		callA := faxtest.CallUUID()
		tiff := faxtest.TIFF(3, false, 4000)
		f, created, err := svc.Receive(ctx, e.tenant, e.endpoint, callA, tiff)
		if err != nil || !created || f.Pages != 3 || f.Status != fax.StatusQueued {
			t.Fatalf("receive: %+v %v %v", f, created, err)
		}
		stored, err := os.ReadFile(filepath.Join(e.dir, e.tenant, "fax", "received", callA+".tif"))
		if err != nil || !bytes.Equal(stored, tiff) {
			t.Fatalf("stored fax: %v", err)
		}
		if n, err := svc.DrainOnce(ctx); n != 1 || err != nil {
			t.Fatalf("drain: %d %v", n, err)
		}
		mails := relay.Mails()
		if len(mails) != 1 || mails[0].From != "switchboard@example.com" || len(mails[0].To) != 1 || mails[0].To[0] != "office@example.com" {
			t.Fatalf("relay got %+v", mails)
		}
		msg, got := attachment(t, mails[0])
		if !bytes.Equal(got, tiff) {
			t.Fatalf("attachment is %d bytes, want the fax's %d", len(got), len(tiff))
		}
		if msg.Header.Get("To") != "<office@example.com>" || !strings.Contains(msg.Header.Get("Subject"), "3 pages") {
			t.Fatalf("headers %v", msg.Header)
		}
		if s, attempts, _ := e.status(t, callA); s != fax.StatusSent || attempts != 1 {
			t.Fatalf("status %s after %d attempts", s, attempts)
		}
		// FreeSWITCH retrying the same upload: the same fax, not a new e-mail.
		if f2, created, err := svc.Receive(ctx, e.tenant, e.endpoint, callA, tiff); err != nil || created || f2.ID != f.ID {
			t.Fatalf("repeat upload: %+v %v %v", f2, created, err)
		}
		if n, _ := svc.DrainOnce(ctx); n != 0 || len(relay.Mails()) != 1 {
			t.Fatalf("repeat sent again: %d claimed, %d mails", n, len(relay.Mails()))
		}
	})
}

// TestFaxSMTPOutageThenRecoveryDeliversOnce: with the relay down the
// attempt fails, is logged in the row and retried after a backoff; when
// the relay is back the fax goes out exactly once.
func TestFaxSMTPOutageThenRecoveryDeliversOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newFaxEnv(t, st)
		relay := faxtest.Start(t, "127.0.0.1:0")
		relay.Stop()
		svc := e.service(t, relay.URL(), fax.Config{BackoffBase: 300 * time.Millisecond})
		ctx := context.Background()
		callA := faxtest.CallUUID()
		if _, _, err := svc.Receive(ctx, e.tenant, e.endpoint, callA, faxtest.TIFF(1, true, 10)); err != nil {
			t.Fatal(err)
		}
		if n, err := svc.DrainOnce(ctx); n != 1 || err != nil {
			t.Fatalf("drain: %d %v", n, err)
		}
		s, attempts, lastErr := e.status(t, callA)
		if s != fax.StatusQueued || attempts != 1 || !strings.Contains(lastErr, "smtp dial") {
			t.Fatalf("after outage: %s, %d attempts, %q", s, attempts, lastErr)
		}
		// The backoff holds the retry back.
		if n, _ := svc.DrainOnce(ctx); n != 0 {
			t.Fatalf("retried before the backoff: %d", n)
		}
		relay.Restart(t)
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); svc.Run(runCtx) }()
		relay.Wait(t, 1, 10*time.Second)
		time.Sleep(700 * time.Millisecond) // time for a wrong second send
		cancel()
		<-done
		if n := len(relay.Mails()); n != 1 {
			t.Fatalf("%d e-mails, want exactly 1", n)
		}
		if s, attempts, _ := e.status(t, callA); s != fax.StatusSent || attempts != 2 {
			t.Fatalf("after recovery: %s, %d attempts", s, attempts)
		}
	})
}

// TestFaxSurvivesWorkerRestart: a fax received while e-mail is off stays
// queued and goes out from a worker started later; a fax leased by a
// worker that died is taken again once its lease ends, and sent once.
func TestFaxSurvivesWorkerRestart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newFaxEnv(t, st)
		ctx := context.Background()
		callA := faxtest.CallUUID()
		off := e.service(t, "", fax.Config{})
		if off.DeliveryEnabled() {
			t.Fatal("delivery enabled without SMTP")
		}
		if _, _, err := off.Receive(ctx, e.tenant, e.endpoint, callA, faxtest.TIFF(1, false, 10)); err != nil {
			t.Fatal(err)
		}
		off.Run(ctx) // returns at once: nothing to send with
		callB := faxtest.CallUUID()
		if _, _, err := off.Receive(ctx, e.tenant, e.endpoint, callB, faxtest.TIFF(2, false, 10)); err != nil {
			t.Fatal(err)
		}
		// The state a worker leaves when it dies mid-send: B leased.
		if _, err := st.Querier().ExecContext(ctx, st.Querier().Rebind(`UPDATE fax_deliveries SET lease_owner = 'dead-worker', lease_until = ? WHERE call_uuid = ?`),
			models.FormatTime(time.Now().Add(time.Second)), callB); err != nil {
			t.Fatal(err)
		}
		relay := faxtest.Start(t, "127.0.0.1:0")
		svc := e.service(t, relay.URL(), fax.Config{})
		if n, err := svc.DrainOnce(ctx); n != 1 || err != nil {
			t.Fatalf("first drain: %d %v", n, err)
		}
		if s, _, _ := e.status(t, callB); s != fax.StatusQueued {
			t.Fatalf("leased fax taken before its lease ended: %s", s)
		}
		time.Sleep(1100 * time.Millisecond)
		if n, err := svc.DrainOnce(ctx); n != 1 || err != nil {
			t.Fatalf("second drain: %d %v", n, err)
		}
		mails := relay.Mails()
		if len(mails) != 2 {
			t.Fatalf("%d e-mails, want 2", len(mails))
		}
		for _, call := range []string{callA, callB} {
			if s, attempts, _ := e.status(t, call); s != fax.StatusSent || attempts != 1 {
				t.Fatalf("%s: %s after %d attempts", call, s, attempts)
			}
		}
	})
}

// TestFaxRefusedRecipientFailsForGood: a 5xx to RCPT TO is not retried;
// the row says why.
func TestFaxRefusedRecipientFailsForGood(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		e := newFaxEnv(t, st)
		relay := faxtest.Start(t, "127.0.0.1:0")
		relay.RefuseRecipients(550)
		svc := e.service(t, relay.URL(), fax.Config{BackoffBase: time.Millisecond})
		ctx := context.Background()
		callA := faxtest.CallUUID()
		if _, _, err := svc.Receive(ctx, e.tenant, e.endpoint, callA, faxtest.TIFF(1, false, 10)); err != nil {
			t.Fatal(err)
		}
		if n, _ := svc.DrainOnce(ctx); n != 1 {
			t.Fatalf("drained %d", n)
		}
		time.Sleep(5 * time.Millisecond)
		if n, _ := svc.DrainOnce(ctx); n != 0 {
			t.Fatal("a refused fax was retried")
		}
		if s, attempts, lastErr := e.status(t, callA); s != fax.StatusFailed || attempts != 1 || !strings.Contains(lastErr, "550") {
			t.Fatalf("%s after %d attempts: %q", s, attempts, lastErr)
		}
	})
}

// TestReceiveRefusesOtherTenantsEndpoint: a tenant cannot store a fax for
// another tenant's endpoint, and a PDF is no TIFF; neither leaves a file.
func TestReceiveRefusesOtherTenantsEndpoint(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		a, b := newFaxEnv(t, st), newFaxEnv(t, st)
		svc := a.service(t, "", fax.Config{})
		ctx := context.Background()
		callA := faxtest.CallUUID()
		if _, _, err := svc.Receive(ctx, a.tenant, b.endpoint, callA, faxtest.TIFF(1, false, 0)); !errors.Is(err, fax.ErrNoEndpoint) {
			t.Fatalf("tenant %s stored a fax for %s's endpoint: %v", a.tenant, b.tenant, err)
		}
		if _, _, err := svc.Receive(ctx, a.tenant, a.endpoint, callA, []byte("%PDF-1.4")); !errors.Is(err, fax.ErrNotTIFF) {
			t.Fatalf("a PDF: %v", err)
		}
		if _, err := os.Stat(filepath.Join(a.dir, a.tenant, "fax")); !os.IsNotExist(err) {
			t.Fatalf("a refused upload left files: %v", err)
		}
	})
}

// TestFaxSentOverSTARTTLS: a relay offering STARTTLS (and refusing AUTH
// before it) gets the fax over TLS, its certificate verified.
func TestFaxSentOverSTARTTLS(t *testing.T) {
	st := storetest.Open(t, storetest.Backend{Name: "sqlite", URL: "sqlite:" + filepath.Join(t.TempDir(), "fax.db")})
	e := newFaxEnv(t, st)
	relay, pool := faxtest.StartTLS(t, "127.0.0.1:0")
	c, err := fax.ParseSMTP(relay.URL(), "switchboard@example.com")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := faxtest.CallUUID()
	if _, _, err := e.service(t, "", fax.Config{}).Receive(ctx, e.tenant, e.endpoint, call, faxtest.TIFF(1, false, 10)); err != nil {
		t.Fatal(err)
	}
	// An unknown certificate is refused (and retried later).
	untrusted := fax.New(st, fax.Config{Dir: e.dir, SMTP: c})
	if n, _ := untrusted.DrainOnce(ctx); n != 1 || len(relay.Mails()) != 0 {
		t.Fatalf("sent to an unverified relay: %d", len(relay.Mails()))
	}
	if s, _, lastErr := e.status(t, call); s != fax.StatusQueued || !strings.Contains(lastErr, "starttls") {
		t.Fatalf("%s %q", s, lastErr)
	}
	if _, err := st.Querier().ExecContext(ctx, st.Querier().Rebind(`UPDATE fax_deliveries SET next_attempt_at = '' WHERE call_uuid = ?`), call); err != nil {
		t.Fatal(err)
	}
	c.TLS = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if n, err := fax.New(st, fax.Config{Dir: e.dir, SMTP: c}).DrainOnce(ctx); n != 1 || err != nil {
		t.Fatalf("drain %d %v", n, err)
	}
	if m := relay.Mails(); len(m) != 1 || !m[0].TLS {
		t.Fatalf("mails %+v", m)
	}
}

func TestParseSMTP(t *testing.T) {
	c, err := fax.ParseSMTP("smtp://u%40x:p%3Ass@mail.example.com", "Fax <fax@example.com>")
	if err != nil || c.Host != "mail.example.com" || c.Port != "587" || c.User != "u@x" || c.Pass != "p:ss" || c.From != "fax@example.com" || !c.Enabled() {
		t.Fatalf("%+v %v", c, err)
	}
	if c, err := fax.ParseSMTP("", ""); err != nil || c.Enabled() {
		t.Fatalf("off: %+v %v", c, err)
	}
	for _, bad := range [][2]string{{"http://mail.example.com", "a@b.c"}, {"smtp://mail.example.com", ""}, {"smtp://", "a@b.c"}} {
		if _, err := fax.ParseSMTP(bad[0], bad[1]); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func decodeBase64Lines(raw []byte) ([]byte, error) {
	for _, line := range bytes.Split(raw, []byte("\r\n")) {
		if len(line) > 76 {
			return nil, errors.New("base64 line over 76 characters")
		}
	}
	return base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(raw)))
}
