package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// result summarises one load run.
type result struct {
	name     string
	requests int
	errors   int
	timeouts int
	firstErr string
	elapsed  time.Duration
	lat      []time.Duration
}

func (r result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

func (r result) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*p))]
}

func (r result) String() string {
	max := time.Duration(0)
	if len(r.lat) > 0 {
		max = r.lat[len(r.lat)-1]
	}
	return fmt.Sprintf("%-34s %8.0f req/s  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  (%d requests, %d errors, %d timeouts)",
		r.name, r.rps(), ms(r.pct(0.50)), ms(r.pct(0.99)), ms(max), r.requests, r.errors, r.timeouts) + r.errNote()
}

// errNote shows the first error of a run that had any.
func (r result) errNote() string {
	if r.firstErr == "" {
		return ""
	}
	return "\n    first error: " + r.firstErr
}

// join is r followed by o, as one run.
func (r result) join(o result, name string) result {
	j := result{name: name, requests: r.requests + o.requests, errors: r.errors + o.errors, timeouts: r.timeouts + o.timeouts,
		firstErr: r.firstErr, elapsed: r.elapsed + o.elapsed, lat: slices.Concat(r.lat, o.lat)}
	if j.firstErr == "" {
		j.firstErr = o.firstErr
	}
	slices.Sort(j.lat)
	return j
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// request is one prepared HTTP request.
type request struct {
	method, url string
	body        []byte
	header      map[string]string
	// expect, when set, must occur in the answer (else it counts as an error).
	expect []byte
}

func newClient(conns int) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, IdleConnTimeout: time.Minute,
		// mod_xml_curl posts with libcurl, which sends a POST body under
		// 64 KB in the same write as its headers (no Expect: 100-continue,
		// freeswitch.md); with net/http's 4 KB buffer every ~6.5 KB
		// dialplan fetch went out in two writes and arrived in two reads.
		WriteBufferSize: 64 << 10,
	}}
}

// do sends one request and drains the answer; it reports non-200s as errors.
func do(ctx context.Context, c *http.Client, r request) error {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url, body)
	if err != nil {
		return err
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	var got []byte
	if r.expect != nil {
		got, err = io.ReadAll(resp.Body)
	} else {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	resp.Body.Close()
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("%s %s: status %d", r.method, r.url, resp.StatusCode)
	}
	if err == nil && r.expect != nil && !bytes.Contains(got, r.expect) {
		err = fmt.Errorf("%s %s: answer lacks %q: %.600s", r.method, r.url, r.expect, got)
	}
	return err
}

// load runs workers keep-alive clients for d, each sending pick(worker, n)
// in a loop, and collects every latency.
func load(ctx context.Context, name string, workers int, d time.Duration, pick func(worker, n int) request) result {
	var mu sync.Mutex
	res := result{name: name}
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := newWireConn(10 * time.Second)
			defer conn.close()
			lat := make([]time.Duration, 0, 1<<14)
			errs := 0
			for n := 0; time.Now().Before(deadline) && ctx.Err() == nil; n++ {
				r := pick(w, n)
				t0 := time.Now()
				if err := conn.do(r); err != nil {
					errs++
					mu.Lock()
					if res.firstErr == "" {
						res.firstErr = err.Error()
					}
					mu.Unlock()
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			res.errors += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.requests = len(res.lat)
	slices.Sort(res.lat)
	return res
}

// openLoop calls send rate times a second for dur, each call on its own
// goroutine (an open loop: a slow answer does not delay the next request),
// and returns the sorted latencies of the calls that succeeded, how many
// failed (the first failure is printed) and how long the run took.
func openLoop(rate int, dur time.Duration, send func(i int) error) ([]time.Duration, int, time.Duration) {
	n := int(dur.Seconds() * float64(rate))
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			t0 := time.Now()
			errs[i] = send(i)
			lat[i] = time.Since(t0)
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var ok []time.Duration
	failed := 0
	for i := range lat {
		if errs[i] != nil {
			if failed++; failed == 1 {
				fmt.Println("first error:", errs[i])
			}
			continue
		}
		ok = append(ok, lat[i])
	}
	slices.Sort(ok)
	return ok, failed, elapsed
}
