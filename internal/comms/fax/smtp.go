package fax

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// SMTPConfig is the mail relay faxes go out through
// (SWITCHBOARD_SMTP_URL smtp://user:pass@host:port, SWITCHBOARD_SMTP_FROM).
type SMTPConfig struct {
	Host, Port string
	User, Pass string
	From       string
	// Timeout bounds one delivery (dial to QUIT).
	Timeout time.Duration
	// TLS is the STARTTLS configuration (nil: verify the relay's name).
	TLS *tls.Config
}

// Enabled says whether e-mail delivery is configured.
func (c SMTPConfig) Enabled() bool { return c.Host != "" && c.From != "" }

// ParseSMTP reads SWITCHBOARD_SMTP_URL and SWITCHBOARD_SMTP_FROM; both
// empty means delivery is off (faxes are kept and queued).
func ParseSMTP(rawURL, from string) (SMTPConfig, error) {
	if rawURL == "" && from == "" {
		return SMTPConfig{}, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "smtp" || u.Hostname() == "" || u.Path != "" && u.Path != "/" {
		return SMTPConfig{}, errors.New("SWITCHBOARD_SMTP_URL: must be smtp://[user:password@]host[:port]")
	}
	addr, err := mail.ParseAddress(from)
	if err != nil {
		return SMTPConfig{}, errors.New("SWITCHBOARD_SMTP_FROM: must be an e-mail address")
	}
	c := SMTPConfig{Host: u.Hostname(), Port: u.Port(), From: addr.Address, Timeout: time.Minute}
	if c.Port == "" {
		c.Port = "587"
	}
	if u.User != nil {
		c.User = u.User.Username()
		c.Pass, _ = u.User.Password()
	}
	return c, nil
}

// Message is one fax e-mail.
type Message struct {
	To       string
	Subject  string
	Text     string
	Filename string
	TIFF     []byte
}

// Send delivers m through the relay: STARTTLS when the relay offers it,
// AUTH PLAIN when credentials are configured (net/smtp refuses to send
// them in clear text to anything but localhost). A *PermanentError is a
// 5xx answer that retrying will not change.
func (c SMTPConfig) Send(ctx context.Context, m Message) error {
	body, err := c.compose(m)
	if err != nil {
		return &PermanentError{Err: err}
	}
	deadline := time.Now().Add(c.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	d := net.Dialer{Deadline: deadline}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(c.Host, c.Port))
	if err != nil {
		return fmt.Errorf("smtp dial: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(deadline)
	cl, err := smtp.NewClient(conn, c.Host)
	if err != nil {
		return classify("smtp greeting", err)
	}
	defer cl.Close()
	if err := cl.Hello("localhost"); err != nil {
		return classify("smtp ehlo", err)
	}
	if ok, _ := cl.Extension("STARTTLS"); ok {
		cfg := c.TLS
		if cfg == nil {
			cfg = &tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12}
		}
		if err := cl.StartTLS(cfg); err != nil {
			return classify("smtp starttls", err)
		}
	}
	if c.User != "" {
		if err := cl.Auth(smtp.PlainAuth("", c.User, c.Pass, c.Host)); err != nil {
			return classify("smtp auth", err)
		}
	}
	if err := cl.Mail(c.From); err != nil {
		return classify("smtp mail from", err)
	}
	if err := cl.Rcpt(m.To); err != nil {
		return classify("smtp rcpt to", err)
	}
	w, err := cl.Data()
	if err != nil {
		return classify("smtp data", err)
	}
	if _, err := w.Write(body); err != nil {
		return classify("smtp data", err)
	}
	if err := w.Close(); err != nil {
		return classify("smtp data", err)
	}
	_ = cl.Quit() // the message is accepted once DATA's reply is 250
	return nil
}

// compose builds the MIME message: a text part and the TIFF attachment,
// base64 in 76-character lines.
func (c SMTPConfig) compose(m Message) ([]byte, error) {
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return nil, fmt.Errorf("recipient %q: %w", m.To, err)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	hdr := func(k, v string) { fmt.Fprintf(&buf, "%s: %s\r\n", k, v) }
	hdr("From", (&mail.Address{Address: c.From}).String())
	hdr("To", to.String())
	hdr("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	hdr("Date", time.Now().UTC().Format(time.RFC1123Z))
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", `multipart/mixed; boundary="`+mw.Boundary()+`"`)
	buf.WriteString("\r\n")
	text, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"text/plain; charset=utf-8"}, "Content-Transfer-Encoding": {"quoted-printable"}})
	if err != nil {
		return nil, err
	}
	if err := writeQP(text, m.Text); err != nil {
		return nil, err
	}
	att, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {mime.FormatMediaType("image/tiff", map[string]string{"name": m.Filename})},
		"Content-Disposition":       {mime.FormatMediaType("attachment", map[string]string{"filename": m.Filename})},
		"Content-Transfer-Encoding": {"base64"},
	})
	if err != nil {
		return nil, err
	}
	enc := base64.StdEncoding.EncodeToString(m.TIFF)
	for len(enc) > 76 {
		fmt.Fprintf(att, "%s\r\n", enc[:76])
		enc = enc[76:]
	}
	fmt.Fprintf(att, "%s\r\n", enc)
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PermanentError is a delivery the relay refused for good (a 5xx reply or
// a message that cannot be composed): the fax is marked failed.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// classify wraps an SMTP step's error, permanent for 5xx replies.
func classify(step string, err error) error {
	err = fmt.Errorf("%s: %w", step, err)
	var tp *textproto.Error
	if errors.As(err, &tp) && tp.Code >= 500 {
		return &PermanentError{Err: err}
	}
	return err
}

// writeQP writes s as quoted-printable with CRLF line ends.
func writeQP(w io.Writer, s string) error {
	q := quotedprintable.NewWriter(w)
	if _, err := q.Write([]byte(strings.ReplaceAll(s, "\n", "\r\n"))); err != nil {
		return err
	}
	return q.Close()
}
