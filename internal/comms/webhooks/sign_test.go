package webhooks

import (
	"testing"
	"time"
)

// The signature of the README's example: HMAC-SHA256("<ts>.<body>").
func TestSignKnownVector(t *testing.T) {
	// printf '1700000000.{"id":"evt_1"}' | openssl dgst -sha256 -hmac secret
	const want = "sha256=af784f27423c462e20039559cd4264140f7b7ed4c9090e26fd663faa5eeb8dda"
	got := Sign("secret", 1700000000, []byte(`{"id":"evt_1"}`))
	if got != want {
		t.Fatalf("signature %q, want %q", got, want)
	}
	if !Verify("secret", 1700000000, []byte(`{"id":"evt_1"}`), got) || Verify("secret", 1700000000, []byte(`{"id":"evt_2"}`), got) {
		t.Fatal("verify does not follow the body")
	}
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	s := &Service{opts: Options{RetryMin: time.Second, RetryMax: 10 * time.Minute}}
	for n, base := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 20: 10 * time.Minute} {
		for range 50 {
			if d := s.backoff(n); d < base/2 || d > base {
				t.Fatalf("attempt %d: %s outside [%s, %s]", n, d, base/2, base)
			}
		}
	}
}
