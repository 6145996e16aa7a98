// Package providertest runs local stand-ins for Twilio's Messages API and
// Meta's WhatsApp Cloud API that check what the real services check
// (credentials, required fields, E.164 numbers, template shape) and answer
// with their response shapes and error codes. Tests point the adapters'
// base URLs at them.
package providertest

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Fault makes the next requests fail with a status and provider code.
type Fault struct {
	Status     int
	Code       int
	Message    string
	RetryAfter string
}

// recorder keeps what a fake accepted and its scripted faults.
type recorder struct {
	mu       sync.Mutex
	faults   []Fault
	requests int
	times    []time.Time
}

// FailNext scripts faults for the next requests, in order.
func (r *recorder) FailNext(f ...Fault) {
	r.mu.Lock()
	r.faults = append(r.faults, f...)
	r.mu.Unlock()
}

// Requests counts every request the fake answered (accepted or not).
func (r *recorder) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// RequestTimes are the arrival times of every request, in order.
func (r *recorder) RequestTimes() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.times...)
}

func (r *recorder) nextFault() *Fault {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.times = append(r.times, time.Now())
	if len(r.faults) == 0 {
		return nil
	}
	f := r.faults[0]
	r.faults = r.faults[1:]
	return &f
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func serve(h http.Handler) *httptest.Server { return httptest.NewServer(h) }
