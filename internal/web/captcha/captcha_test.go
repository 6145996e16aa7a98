package captcha

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestNewConfiguration: both settings unset is "no captcha"; one without
// the other, or a URL that is not http(s), is a configuration error.
func TestNewConfiguration(t *testing.T) {
	if v, err := New("", "", nil); v != nil || err != nil {
		t.Fatalf("unset: %v %v", v, err)
	}
	for _, c := range [][2]string{{"https://x.example/siteverify", ""}, {"", "secret"}, {"ftp://x.example/", "s"}, {"not a url", "s"}} {
		if _, err := New(c[0], c[1], nil); err == nil {
			t.Errorf("New(%q, %q) accepted", c[0], c[1])
		}
	}
}

// TestVerifyAnswers: success, a rejected token (with the provider's codes),
// a refused secret, a broken answer and a failing provider are told apart;
// an empty or oversized token is rejected without asking.
func TestVerifyAnswers(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		_ = r.ParseForm()
		switch r.PostForm.Get("response") {
		case "ok":
			_, _ = w.Write([]byte(`{"success":true}`))
		case "secret":
			_, _ = w.Write([]byte(`{"success":false,"error-codes":["invalid-input-secret"]}`))
		case "garbage":
			_, _ = w.Write([]byte(`<html>`))
		case "fail":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			_, _ = w.Write([]byte(`{"success":false,"error-codes":["timeout-or-duplicate"]}`))
		}
	}))
	defer srv.Close()
	v, err := New(srv.URL, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := v.Verify(ctx, "ok", "192.0.2.1"); err != nil {
		t.Errorf("ok: %v", err)
	}
	var rej *ErrRejected
	if err := v.Verify(ctx, "reused", ""); !errors.As(err, &rej) || rej.Codes[0] != "timeout-or-duplicate" {
		t.Errorf("reused: %v", err)
	}
	for _, tok := range []string{"secret", "garbage", "fail"} {
		if err := v.Verify(ctx, tok, ""); err == nil || errors.As(err, &rej) {
			t.Errorf("%s: %v, want a provider error", tok, err)
		}
	}
	n := asked.Load()
	for _, tok := range []string{"", strings.Repeat("a", MaxTokenLen+1)} {
		if err := v.Verify(ctx, tok, ""); !errors.As(err, &rej) {
			t.Errorf("token of %d: %v", len(tok), err)
		}
	}
	if asked.Load() != n {
		t.Errorf("the provider was asked about an empty or oversized token")
	}
}
