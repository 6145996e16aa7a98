package main

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/models"
)

// The cold modes measure what FreeSWITCH meets when nothing it asks for
// was asked before: the first fetch of every user, calls between random
// callers and callees, and a registration storm. Before each, the Redis
// dataset epoch that every in-memory key includes is replaced, so no model
// or document of the server is valid any more.

// template is a request body with placeholders exactly as long as the
// values they stand for, so building a body is a copy and a few
// replacements (cheap enough for the load generator to do per request,
// instead of holding 50,000 prepared bodies in the measured process).
type template struct {
	body []byte
	// at lists, per placeholder, the offsets where it occurs in body.
	at    [][]int
	holes []string
}

func newTemplate(capture []byte, build func(holes ...string) []byte, holes ...string) (template, error) {
	t := template{body: build(holes...), holes: holes}
	for _, h := range holes {
		if bytes.Contains(capture, []byte(h)) {
			return t, fmt.Errorf("placeholder %q occurs in the capture", h)
		}
		var offs []int
		for i := 0; ; {
			j := bytes.Index(t.body[i:], []byte(h))
			if j < 0 {
				break
			}
			offs = append(offs, i+j)
			i += j + len(h)
		}
		if len(offs) == 0 {
			return t, fmt.Errorf("placeholder %q missing from the body", h)
		}
		t.at = append(t.at, offs)
	}
	return t, nil
}

// fill copies the body once and writes each value over its placeholder.
func (t template) fill(vals ...string) []byte {
	b := bytes.Clone(t.body)
	for i, offs := range t.at {
		if len(vals[i]) != len(t.holes[i]) {
			panic(fmt.Sprintf("value %q does not fit placeholder %q", vals[i], t.holes[i]))
		}
		for _, o := range offs {
			copy(b[o:], vals[i])
		}
	}
	return b
}

// Placeholders (no hex digit, so none can hide in a UUID of the captures).
var (
	phUser   = "UUUUUUUUUUUUUUUU" // <ext>-<tenant>, 4+1+11
	phTenant = "TTTTTTTTTTT"      // bench_tNNNN
	phFrom   = "WWWW"
	phTo     = "YYYY"
	phNumber = "ZZZZZZZZZZ"  // a national number, 0 + 9 digits
	phDID    = "VVVVVVVVVVV" // DID digits, 2721 + 7
	phCaller = "KKKKKKKKKK"  // an outside caller
)

// coldSet builds the cold modes' bodies.
type coldSet struct {
	dir, local, outbound, public template
}

func newColdSet(b *bodyset) (*coldSet, error) {
	var c coldSet
	var err error
	if c.dir, err = newTemplate(b.sipAuth, func(h ...string) []byte { return b.directoryUser(h[0]) }, phUser); err != nil {
		return nil, err
	}
	if c.local, err = newTemplate(b.call, func(h ...string) []byte { return b.local(h[0], h[1], h[2]) }, phTenant, phFrom, phTo); err != nil {
		return nil, err
	}
	if c.outbound, err = newTemplate(b.call, func(h ...string) []byte { return b.local(h[0], h[1], h[2]) }, phTenant, phFrom, phNumber); err != nil {
		return nil, err
	}
	if c.public, err = newTemplate(b.call, func(h ...string) []byte { return b.publicFrom(h[0], h[1]) }, phDID, phCaller); err != nil {
		return nil, err
	}
	return &c, nil
}

func userID(i int) string { return extName(i%extsPerTenant) + "-" + tenantName(i/extsPerTenant) }

// a1Param is the a1-hash parameter a correct answer for user carries.
func a1Param(user string) []byte {
	sum := md5.Sum([]byte(user + ":sip.bench:" + benchSecret))
	return []byte(`name="a1-hash" value="` + hex.EncodeToString(sum[:]) + `"`)
}

// invalidateAll makes every model and document the server holds
// unusable at once, as after a restart of every replica: it publishes the
// reset notification every replica drops its memory on, then waits a
// moment for it to arrive.
func invalidateAll(ctx context.Context, st *models.Store, rdb redis.UniversalClient) error {
	if err := fsxml.ResetAll(ctx, st, rdb); err != nil {
		return err
	}
	time.Sleep(100 * time.Millisecond)
	return nil
}

// users returns every user index in a random order (registrations of one
// tenant's phones do not arrive together).
func users(seed uint64) []int {
	order := make([]int, tenantCount*extsPerTenant)
	for i := range order {
		order[i] = i
	}
	r := rand.New(rand.NewPCG(seed, seed))
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

// randomCall picks a call for the random caller/callee mode: 80 % between
// two random extensions of a random tenant, 10 % from a random extension
// to a random national number (through the outbound route of one of the
// tenants that have one), 10 % from a random outside number to a random DID.
func (c *coldSet) randomCall(xmlURL string, r *rand.Rand) request {
	switch n := r.IntN(10); {
	case n < 8:
		t := tenantName(r.IntN(tenantCount))
		from := r.IntN(extsPerTenant)
		to := (from + 1 + r.IntN(extsPerTenant-1)) % extsPerTenant
		req := xmlRequest(xmlURL, c.local.fill(t, extName(from), extName(to)))
		req.expect = []byte("user/" + extName(to) + "-" + t + "@sip.bench")
		return req
	case n < 9:
		t := tenantName(r.IntN(didTenants))
		num := fmt.Sprintf("0%09d", 100000000+r.IntN(900000000))
		req := xmlRequest(xmlURL, c.outbound.fill(t, extName(r.IntN(extsPerTenant)), num))
		req.expect = []byte("sofia/gateway/" + benchTrunk + "/+27" + num[1:])
		return req
	default:
		i := r.IntN(didTenants)
		req := xmlRequest(xmlURL, c.public.fill(didNumber(i)[1:], fmt.Sprintf("08%08d", r.IntN(100000000))))
		req.expect = []byte(`application="transfer" data="` + extName(0) + " XML " + tenantName(i) + `"`)
		return req
	}
}

// loadN sends n requests over workers keep-alive connections, each worker
// taking the next index, and collects every latency. A request that takes
// longer than timeout is a timeout (the client gives up on it, as
// mod_xml_curl does with its timeout parameter). No request starts after
// until (0: none), so at a million users a mode lasts as long as the others.
func loadN(ctx context.Context, name string, workers, n int, timeout, until time.Duration, pick func(i int) request) result {
	var next atomic.Int64
	var mu sync.Mutex
	res := result{name: name}
	start := time.Now()
	deadline := start.Add(until)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := newWireConn(timeout)
			defer conn.close()
			lat := make([]time.Duration, 0, n/workers+1)
			errs, timeouts := 0, 0
			for ctx.Err() == nil && (until == 0 || time.Now().Before(deadline)) {
				i := int(next.Add(1)) - 1
				if i >= n {
					break
				}
				r := pick(i)
				t0 := time.Now()
				if err := conn.do(r); err != nil {
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						timeouts++
					}
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
			res.timeouts += timeouts
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.requests = len(res.lat)
	slices.Sort(res.lat)
	return res
}

// serverStats is what the XML service did during one run.
type serverStats struct {
	srv    *server
	before fsxml.Stats
}

func startStats(srv *server) serverStats { return serverStats{srv: srv, before: srv.stats()} }

func (s serverStats) String() string {
	a := s.srv.stats()
	f := a.Fetches - s.before.Fetches
	hits := a.DocHits - s.before.DocHits
	pct := 0.0
	if f > 0 {
		pct = 100 * float64(hits) / float64(f)
	}
	return fmt.Sprintf("server: %d fetches, %d renders, %d answered from memory (%.0f%%), %d tenant models built (%d more preloaded in %d batches), %d updated in place, %d platform models built",
		f, a.Renders-s.before.Renders, hits, pct, a.TenantBuilds-s.before.TenantBuilds, a.TenantPreloads-s.before.TenantPreloads, a.PreloadBatches-s.before.PreloadBatches, a.TenantPatches-s.before.TenantPatches, a.PlatformBuilds-s.before.PlatformBuilds)
}
