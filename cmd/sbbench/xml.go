package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/app"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// benchXML measures /fs/xml: a bare 1 KB route for reference, cached
// directory and dialplan fetches, and fetches right after a write.
func benchXML(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("xml", flag.ContinueOnError)
	dur := fs.Duration("duration", 8*time.Second, "length of each load run")
	workers := fs.Int("workers", 16, "concurrent keep-alive clients")
	captures := fs.String("captures", "internal/freeswitch/xmlcurl/testdata/captures", "directory of mod_xml_curl capture files")
	misses := fs.Int("misses", 300, "write-then-fetch rounds")
	var prof profiles
	prof.flags(fs)
	only := fs.String("only", "", "run only these modes (comma-separated: cached,first,storm,random,cold,restart-first,restart-random)")
	tenants := fs.Int("tenants", 1000, "tenants seeded")
	userCount := fs.Int("users", 50000, "users (extensions) seeded, spread evenly over the tenants")
	memProfile := fs.String("memprofile", "", "write a heap profile after all modes to this file")
	stormConns := fs.Int("storm-conns", 256, "concurrent connections of the registration storm")
	stormTimeout := fs.Duration("storm-timeout", 5*time.Second, "a storm fetch slower than this is a timeout (mod_xml_curl's timeout in freeswitch.md's example)")
	inProcess := fs.Bool("inprocess", false, "run the server in this process (implied by -cpuprofile and -memprofile); by default it runs in a child so its memory is measured alone")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := setSize(*tenants, *userCount); err != nil {
		return err
	}
	// Profiles are of this process: the server must run in it.
	inproc := *inProcess || prof.cpu != "" || prof.mutex != "" || prof.block != "" || *memProfile != ""
	b, err := openBackend(ctx)
	if err != nil {
		return err
	}
	defer b.close()
	// The server keeps its models across the restart modes' restarts, as
	// a replica stopped by SIGTERM does (SWITCHBOARD_XML_SNAPSHOT): in a
	// file of this run, unless the caller names one (or "off").
	if os.Getenv("SWITCHBOARD_XML_SNAPSHOT") == "" {
		dir, err := os.MkdirTemp("", "sbbench-models-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		os.Setenv("SWITCHBOARD_XML_SNAPSHOT", filepath.Join(dir, "xml-models"))
	}
	fmt.Printf("backend: %s\n", b.name)
	t0 := time.Now()
	if err := seed(ctx, b.st); err != nil {
		return err
	}
	fmt.Printf("seed: %d tenants, %d extensions, %d DIDs ready in %s; database %s; load %s\n", tenantCount, tenantCount*extsPerTenant, didTenants,
		time.Since(t0).Round(time.Millisecond), b.size(ctx), loadAvg())

	srv, err := startServers(ctx, b, inproc)
	if err != nil {
		return err
	}
	defer srv.stop()
	if srv.pid != 0 {
		// The load generator's own garbage collections (about ten a
		// second at the default setting, each pausing and then slowing
		// every worker) landed in the latencies measured; FreeSWITCH's
		// libcurl has none. The server, in its child, keeps the default.
		debug.SetGCPercent(800)
	}
	xmlURL, bareURL := srv.xmlURL, srv.bareURL
	key, err := b.st.CreateKey(ctx, map[string]any{"name": "sbbench"}, "sbbench")
	if err != nil {
		return err
	}
	apiKey := key["key"].(string)

	bodies, err := newBodies(*captures)
	if err != nil {
		return err
	}
	// The cached working set: 2,000 users over 1,000 tenants, 500 local
	// calls and the 100 DIDs, each fetched once first so the runs hit.
	const dirUsers, localCalls = 2000, 500
	// Bodies are built before the runs so the load generator spends its
	// CPU on requests, not on formatting them.
	dirReqs := make([]request, dirUsers)
	for i := range dirReqs {
		dirReqs[i] = xmlRequest(xmlURL, bodies.directory(tenantName(i%tenantCount), extName((i/tenantCount)%extsPerTenant)))
	}
	dpReqs := make([]request, localCalls)
	for i := range dpReqs {
		if i%5 == 0 {
			dpReqs[i] = xmlRequest(xmlURL, bodies.public(didNumber(i/5%didTenants)))
			continue
		}
		dpReqs[i] = xmlRequest(xmlURL, bodies.local(tenantName(i%tenantCount), extName(1), extName(2+i%40)))
	}
	warm := newClient(1)
	for _, r := range append(append([]request{}, dirReqs...), dpReqs...) {
		if err := do(ctx, warm, r); err != nil {
			return fmt.Errorf("warm the cache: %w", err)
		}
	}
	dir := func(i int) request { return dirReqs[i] }
	dp := func(i int) request { return dpReqs[i] }
	bare := load(ctx, "bare 1 KB route", *workers, *dur, func(int, int) request { return request{method: "GET", url: bareURL} })
	if err := prof.start(); err != nil {
		return err
	}
	defer prof.stop() //nolint:errcheck // stopped and checked below; this is for early returns
	skip := func(mode string) bool { return *only != "" && !slices.Contains(strings.Split(*only, ","), mode) }
	// Each mode is compared with a bare run right before it: on a shared
	// machine the load from elsewhere drifts, and adjacent runs see the
	// same drift.
	adjacent := map[string]result{}
	bareBefore := func(mode string) {
		adjacent[mode] = load(ctx, "bare, before "+mode, *workers, *dur/2, func(int, int) request { return request{method: "GET", url: bareURL} })
	}
	var dirRes, dpRes, first, storm, random, randomCold result
	var firstStats, stormStats, randomStats, randomColdStats, restartFirstStats, restartRandomStats string
	if !skip("cached") {
		bareBefore("directory cached")
		dirRes = load(ctx, "directory sip_auth (cached)", *workers, *dur, func(w, n int) request { return dir((w*7919 + n) % dirUsers) })
		bareBefore("dialplan cached")
		dpRes = load(ctx, "dialplan (cached)", *workers, *dur, func(w, n int) request { return dp((w*7919 + n) % localCalls) })
	}

	cold, err := newColdSet(bodies)
	if err != nil {
		return err
	}
	// Directory, first fetch of each of the 50,000 users, in random order.
	if !skip("first") {
		if err := invalidateAll(ctx, b.st, b.rdb); err != nil {
			return err
		}
		order := users(1)
		bareBefore("first fetch")
		st := startStats(srv)
		first = loadN(ctx, "directory first fetch of each user", *workers, len(order), 10*time.Second, 2**dur, func(i int) request {
			u := userID(order[i])
			r := xmlRequest(xmlURL, cold.dir.fill(u))
			r.expect = a1Param(u)
			return r
		})
		firstStats = st.String()
	}
	// Registration storm: every user's first sip_auth at once.
	if !skip("storm") {
		if err := invalidateAll(ctx, b.st, b.rdb); err != nil {
			return err
		}
		order := users(2)
		bareBefore("storm")
		st := startStats(srv)
		storm = loadN(ctx, fmt.Sprintf("registration storm, %d conns", *stormConns), *stormConns, len(order), *stormTimeout, 2**dur, func(i int) request {
			u := userID(order[i])
			r := xmlRequest(xmlURL, cold.dir.fill(u))
			r.expect = a1Param(u)
			return r
		})
		stormStats = st.String()
	}
	// Dialplan, random caller and callee: every tenant's model in memory,
	// no document of these calls rendered yet. Then the same from cold (a
	// new dataset epoch first: nothing in memory is valid).
	rngs := make([]*rand.Rand, *workers)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), 42))
	}
	if !skip("random") {
		// Steady state: every tenant's model in memory (one call per
		// tenant first, untimed), no document of these calls cached.
		warmCalls := newClient(*workers)
		for i := 0; i < tenantCount; i++ {
			r := xmlRequest(xmlURL, cold.local.fill(tenantName(i), extName(0), extName(1)))
			if err := do(ctx, warmCalls, r); err != nil {
				return fmt.Errorf("warm the tenant models: %w", err)
			}
		}
		bareBefore("random")
		st := startStats(srv)
		random = load(ctx, "dialplan random caller and callee", *workers, *dur, func(w, _ int) request { return cold.randomCall(xmlURL, rngs[w]) })
		randomStats = st.String()
	}
	if !skip("cold") {
		if err := invalidateAll(ctx, b.st, b.rdb); err != nil {
			return err
		}
		bareBefore("random from cold")
		st := startStats(srv)
		randomCold = load(ctx, "dialplan random, from cold", *workers, *dur, func(w, _ int) request { return cold.randomCall(xmlURL, rngs[w]) })
		randomColdStats = st.String()
	}
	memBefore := ""
	var restartFirst, restartRandom, restartSecond result
	if !skip("restart-first") || !skip("restart-random") {
		memBefore = srv.memory()
	}
	// After a restart of the server process: nothing in memory, the
	// change notifications not yet subscribed; the timed run starts as
	// soon as the new process listens (as FreeSWITCH's retries do).
	restart := func(mode string) error {
		bareBefore(mode)
		srv.stop()
		if srv, err = startServers(ctx, b, inproc); err != nil {
			return err
		}
		xmlURL, bareURL = srv.xmlURL, srv.bareURL
		return nil
	}
	if !skip("restart-first") {
		if err := restart("restart first fetch"); err != nil {
			return err
		}
		order := users(3)
		st := startStats(srv)
		restartFirst = loadN(ctx, "directory first fetch after a restart", *workers, len(order), 10*time.Second, *dur, func(i int) request {
			u := userID(order[i])
			r := xmlRequest(xmlURL, cold.dir.fill(u))
			r.expect = a1Param(u)
			return r
		})
		restartFirstStats = st.String()
	}
	if !skip("restart-random") {
		if err := restart("restart random"); err != nil {
			return err
		}
		pick := func(w, _ int) request { return cold.randomCall(xmlURL, rngs[w]) }
		st := startStats(srv)
		restartSecond = load(ctx, "dialplan random, 1st s after a restart", *workers, time.Second, pick)
		rest := load(ctx, "dialplan random, after a restart", *workers, *dur-time.Second, pick)
		restartRandom = restartSecond.join(rest, "dialplan random after a restart")
		restartRandomStats = st.String()
	}
	if err := prof.stop(); err != nil {
		return err
	}
	bare2 := load(ctx, "bare 1 KB route (again)", *workers, *dur, func(int, int) request { return request{method: "GET", url: bareURL} })
	miss := writeThenFetch(ctx, xmlURL, apiKey, bodies, *misses)

	fmt.Println()
	fmt.Printf("machine: %d CPUs (GOMAXPROCS %d), %s; %d workers, %s per timed run\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), *workers, *dur)
	for _, r := range []result{bare, dirRes, dpRes, first, storm, random, randomCold, restartFirst, restartSecond, restartRandom, bare2} {
		if r.name != "" {
			fmt.Println(r)
		}
	}
	ref := (bare.rps() + bare2.rps()) / 2
	pct := func(r result) float64 { return 100 * r.rps() / ref }
	fmt.Printf("of bare (mean of both bare runs, %.0f req/s): directory cached %.0f%%, dialplan cached %.0f%%, directory first fetch %.0f%%, storm %.0f%%, dialplan random %.0f%%, random from cold %.0f%%\n",
		ref, pct(dirRes), pct(dpRes), pct(first), pct(storm), pct(random), pct(randomCold))
	for _, m := range []struct {
		mode string
		r    result
	}{{"directory cached", dirRes}, {"dialplan cached", dpRes}, {"first fetch", first}, {"storm", storm}, {"random", random}, {"random from cold", randomCold},
		{"restart first fetch", restartFirst}, {"restart random", restartRandom}, {"restart random 1st s", restartSecond}} {
		bm := strings.TrimSuffix(m.mode, " 1st s")
		if b, ok := adjacent[bm]; ok && m.r.name != "" {
			fmt.Printf("%-22s %3.0f%% of the bare run just before it (%.0f req/s, p99 %.2f ms); p99 %.2f ms, %d errors\n", m.mode, 100*m.r.rps()/b.rps(), b.rps(), ms(b.pct(0.99)), ms(m.r.pct(0.99)), m.r.errors)
		}
	}
	fmt.Println("first fetch  ", firstStats)
	fmt.Println("storm        ", stormStats)
	fmt.Println("random calls ", randomStats)
	fmt.Println("random, cold ", randomColdStats)
	fmt.Println("restart first", restartFirstStats)
	fmt.Println("restart calls", restartRandomStats)
	fmt.Println(miss)
	fmt.Printf("load at the end: %s; database %s\n", loadAvg(), b.size(ctx))
	if memBefore != "" {
		fmt.Println("before the restarts:", memBefore)
	}
	if srv.pid != 0 {
		fmt.Printf("server process peak RSS %s\n", procStatus(fmt.Sprint(srv.pid), "VmHWM"))
	}
	fmt.Println(srv.memory())
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			return err
		}
	}
	return nil
}

// startServer runs the real server (app.Build) on a real listener.
func startServer(ctx context.Context, b *backend, log *slog.Logger) (string, func(), error) {
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL": b.dbURL,
		"SWITCHBOARD_LISTEN":       "127.0.0.1:0",
		"SWITCHBOARD_SECRET_KEY":   benchKey,
		"SWITCHBOARD_SIP_DOMAIN":   "sip.bench",
		"SWITCHBOARD_RATE_LIMIT":   "0", // the benchmark measures the XML path, not the limiter
	}
	// The XML cache's settings pass through, for runs at other bounds.
	for _, k := range []string{"SWITCHBOARD_XML_CACHE_MAX_BYTES", "SWITCHBOARD_XML_PRELOAD", "SWITCHBOARD_XML_SNAPSHOT"} {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	cfg, err := app.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		return "", nil, err
	}
	// As serve does (the server's child process has only this one).
	_, _ = app.SetMemoryLimit(cfg, os.Getenv)
	fapp, stop, err := app.Build(ctx, cfg, b.st, b.rdb, log)
	if err != nil {
		return "", nil, err
	}
	return listen(fapp, stop)
}

// startBare runs a second app from routes.New with the same middleware
// and configuration as the real one, serving GET /bench/bare (a fixed 1 KB
// body): the reference for what the HTTP stack itself costs; and the
// benchmark's own reads of the server (benchRoutes).
func startBare(st *models.Store, rdb redis.UniversalClient, log *slog.Logger) (string, func(), error) {
	var extra []routes.Route
	for _, r := range benchRoutes() {
		extra = append(extra, routes.Route{Method: "GET", Path: r.path, Summary: "benchmark reference", Tag: "bench", Handler: r.handler})
	}
	fapp := routes.New(routes.Deps{Store: st, Redis: rdb, Logger: log, Extra: extra})
	url, stop, err := listen(fapp, func() {})
	return url + "/bench/bare", stop, err
}

func listen(fapp *fiber.App, stop func()) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go fapp.Listener(ln) //nolint:errcheck // ends at shutdown
	return "http://" + ln.Addr().String(), func() {
		_ = fapp.ShutdownWithTimeout(5 * time.Second)
		stop()
	}, nil
}

// writeThenFetch changes an extension through the API, then fetches its
// directory entry: the fetch must miss the cache and render from the
// database. Only the fetch is timed.
func writeThenFetch(ctx context.Context, xmlURL, apiKey string, bodies *bodyset, rounds int) result {
	c := newClient(1)
	res := result{name: "directory after a write"}
	base := strings.TrimSuffix(xmlURL, "/fs/xml")
	start := time.Now()
	var busy time.Duration
	for i := 0; i < rounds; i++ {
		t, ext := tenantName(i%tenantCount), extName(i%extsPerTenant)
		put := request{method: "PUT", url: base + "/api/tenants/" + t + "/extensions/" + ext,
			body:   []byte(fmt.Sprintf(`{"callerid":"Round%d <%s>"}`, i, ext)),
			header: map[string]string{"X-API-Key": apiKey, "Content-Type": "application/json"}}
		if err := do(ctx, c, put); err != nil {
			res.errors++
			res.firstErr = cmp.Or(res.firstErr, err.Error())
			continue
		}
		t0 := time.Now()
		// The very next fetch must carry the new value (not merely answer).
		fetch := xmlRequest(xmlURL, bodies.directory(t, ext))
		fetch.expect = []byte(fmt.Sprintf(`name="effective_caller_id_name" value="Round%d"`, i))
		if err := do(ctx, c, fetch); err != nil {
			res.errors++
			res.firstErr = cmp.Or(res.firstErr, err.Error())
			continue
		}
		d := time.Since(t0)
		busy += d
		res.lat = append(res.lat, d)
	}
	res.elapsed = busy
	if busy == 0 {
		res.elapsed = time.Since(start)
	}
	res.requests = len(res.lat)
	slices.Sort(res.lat)
	return res
}

// procStatus reads one field (VmRSS, VmHWM) of /proc/<pid>/status.
func procStatus(pid, field string) string {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field+":") {
			return strings.TrimSpace(strings.TrimPrefix(line, field+":"))
		}
	}
	return "unknown"
}

// bodyset builds mod_xml_curl bodies from the real captures.
type bodyset struct{ sipAuth, call []byte }

func newBodies(dir string) (*bodyset, error) {
	read := func(prefix string) ([]byte, error) {
		m, err := filepath.Glob(filepath.Join(dir, prefix+"-*.http"))
		if err != nil || len(m) != 1 {
			return nil, fmt.Errorf("capture %s in %s: run from the repository root or pass -captures", prefix, dir)
		}
		raw, err := os.ReadFile(m[0])
		if err != nil {
			return nil, err
		}
		_, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
		if !ok {
			return nil, errors.New("capture " + prefix + ": no body")
		}
		return body, nil
	}
	var b bodyset
	var err error
	if b.sipAuth, err = read("009"); err != nil {
		return nil, err
	}
	if b.call, err = read("011"); err != nil {
		return nil, err
	}
	return &b, nil
}

func (b *bodyset) directory(tenant, ext string) []byte { return b.directoryUser(ext + "-" + tenant) }

func (b *bodyset) directoryUser(user string) []byte {
	return fakefs.FormWith(b.sipAuth, "user", user, "domain", "sip.bench", "key_value", "sip.bench",
		"sip_auth_username", user, "sip_auth_realm", "sip.bench")
}

func (b *bodyset) local(tenant, from, to string) []byte {
	return fakefs.FormWith(b.call, "Caller-Context", tenant, "Hunt-Context", tenant, "variable_user_context", tenant,
		"Caller-Destination-Number", to, "Hunt-Destination-Number", to,
		"Caller-Caller-ID-Number", from, "Hunt-Caller-ID-Number", from,
		"variable_sb_ext", from, "variable_sb_tenant", tenant)
}

func (b *bodyset) public(did string) []byte {
	return b.publicFrom(strings.TrimPrefix(did, "+"), "0825550001")
}

func (b *bodyset) publicFrom(num, caller string) []byte {
	return fakefs.FormWith(b.call, "Caller-Context", "public", "Hunt-Context", "public", "variable_user_context", "public",
		"Caller-Destination-Number", num, "Hunt-Destination-Number", num,
		"Caller-Caller-ID-Number", caller, "Hunt-Caller-ID-Number", caller)
}

func xmlRequest(url string, body []byte) request {
	return request{method: "POST", url: url + "/fs/xml", body: body,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "User-Agent": "freeswitch-xml/1.0"}}
}
