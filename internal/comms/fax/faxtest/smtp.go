// Package faxtest is a mail relay for tests: go-smtp's server over real
// TCP, requiring AUTH PLAIN before MAIL and recording each accepted
// message, so a test sees what a mailbox would.
package faxtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Mail is one accepted message.
type Mail struct {
	From string
	To   []string
	Data []byte
	// TLS says the message came over STARTTLS.
	TLS bool
}

// Relay is a running SMTP server.
type Relay struct {
	Addr       string
	User, Pass string

	mu   sync.Mutex
	mail []Mail
	// RefuseRcpt, when set, answers RCPT TO with this code (e.g. 550).
	refuseRcpt int
	srv        *smtp.Server
	ln         net.Listener
	tls        *tls.Config
	notify     chan struct{}
}

// StartTLS is Start with STARTTLS offered (a certificate for 127.0.0.1,
// trusted by the returned pool) and AUTH refused before it.
func StartTLS(t testing.TB, addr string) (*Relay, *x509.CertPool) {
	t.Helper()
	cert, pool := selfSigned(t)
	r := &Relay{User: "faxer", Pass: "s3cret pass", notify: make(chan struct{}, 16), tls: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	r.listen(t, addr)
	return r, pool
}

// Start serves on addr ("127.0.0.1:0" for any free port); it closes at the
// end of the test.
func Start(t testing.TB, addr string) *Relay {
	t.Helper()
	r := &Relay{User: "faxer", Pass: "s3cret pass", notify: make(chan struct{}, 16)}
	r.listen(t, addr)
	return r
}

func (r *Relay) listen(t testing.TB, addr string) {
	t.Helper()
	var l net.Listener
	var err error
	// A port just released may take a moment to be free again.
	for i := 0; i < 50; i++ {
		if l, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("smtp relay listen: %v", err)
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{r: r, conn: c}, nil }))
	srv.Domain = "relay.test"
	// Without TLS, AUTH in clear text on loopback (net/smtp sends it to
	// localhost only); with TLS, never before STARTTLS.
	srv.AllowInsecureAuth = r.tls == nil
	srv.TLSConfig = r.tls
	srv.MaxMessageBytes = 32 << 20
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	r.Addr = l.Addr().String()
	r.mu.Lock()
	r.srv, r.ln = srv, l
	r.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// Stop closes the relay (an outage); Restart serves again on the same address.
func (r *Relay) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	// The listener itself: Serve may not have registered it with the
	// server yet.
	_ = r.ln.Close()
	_ = r.srv.Close()
}

// Restart serves again on the address Stop released.
func (r *Relay) Restart(t testing.TB) { r.listen(t, r.Addr) }

// RefuseRecipients makes RCPT TO answer code (0: accept again).
func (r *Relay) RefuseRecipients(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuseRcpt = code
}

// URL is SWITCHBOARD_SMTP_URL for this relay.
func (r *Relay) URL() string {
	return "smtp://" + r.User + ":" + "s3cret%20pass" + "@" + r.Addr
}

// Mails are the accepted messages so far.
func (r *Relay) Mails() []Mail {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Mail(nil), r.mail...)
}

// Wait waits until n messages were accepted (or fails the test).
func (r *Relay) Wait(t testing.TB, n int, within time.Duration) []Mail {
	t.Helper()
	deadline := time.After(within)
	for {
		if m := r.Mails(); len(m) >= n {
			return m
		}
		select {
		case <-r.notify:
		case <-deadline:
			t.Fatalf("relay got %d messages, want %d", len(r.Mails()), n)
		}
	}
}

type session struct {
	r      *Relay
	conn   *smtp.Conn
	authed bool
	from   string
	to     []string
}

var _ smtp.AuthSession = (*session)(nil)

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		if user != s.r.User || pass != s.r.Pass {
			return errors.New("invalid credentials")
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if !s.authed {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.r.mu.Lock()
	code := s.r.refuseRcpt
	s.r.mu.Unlock()
	if code != 0 {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 1, 1}, Message: "no such mailbox"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil {
		return err
	}
	s.r.mu.Lock()
	_, overTLS := s.conn.TLSConnectionState()
	s.r.mail = append(s.r.mail, Mail{From: s.from, To: s.to, Data: b.Bytes(), TLS: overTLS})
	s.r.mu.Unlock()
	select {
	case s.r.notify <- struct{}{}:
	default:
	}
	return nil
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }

// selfSigned is a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "relay.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
