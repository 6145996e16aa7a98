GO ?= go
BIN := bin/switchboard

.PHONY: build run test test-cluster test-short bench chaos fuzz vet fmt ci webclient

COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)

build:
	$(GO) build -ldflags "-X github.com/switchboard/switchboard/internal/app.Commit=$(COMMIT)" -o $(BIN) ./cmd/switchboard

run: build
	./$(BIN) serve

# Tests that opt in (apptest.Each, the HTTP tests) run this many at once:
# they mostly wait on their servers, the database and Redis, so more than
# the 2 CPUs go test would take by default.
TEST_PARALLEL ?= 4

# The test command. With MySQL configured (SWITCHBOARD_TEST_MYSQL_URL, and
# Redis by SWITCHBOARD_TEST_REDIS_URL; .ci/run sets both), passes run on
# databases of their own (SWITCHBOARD_TEST_DB_SUFFIX, Redis database
# numbers), so no server of one pass hears another's changes. Side by side:
#   - every package but routes with the race detector, on MySQL and Redis;
#   - routes, the longest package (under the race detector, all of it
#     was about ten of a CI run's 36 CPU-minutes), in two processes of
#     its own from the start: its concurrency tests
#     (ROUTES_RACE_TESTS) with the race detector, every other test without
#     it (with the eslgo tests below, which need no other pass);
#   - the tests that run per backend again without it, on SQLite
#     (storetest's SWITCHBOARD_TEST_BACKENDS and PerBackendOnly): SQLite is C
#     translated to Go, which the race detector slows most and which holds
#     no goroutines of ours;
#   - the Redis Cluster pass (test-cluster).
# Then, alone, on MySQL without -race: the browser tests (Chromium timed
# out when it ran beside the passes above on a loaded machine).
# Without MySQL, every package runs with -race on SQLite, then the tests
# -race skips.
#
# The packages with tests that run once per backend (storetest, apptest):
# the SQLite pass runs only those, and in them skips the tests that run on
# one backend of their choosing (storetest.PerBackendOnly).
PER_BACKEND_PACKAGES = $(shell grep -rlE --include='*_test.go' '(storetest|apptest)\.' . | xargs -r -n1 dirname | sort -u)
# Tests that hit a race inside eslgo v1.5.2, and the client generation
# (CPU work only, most of a minute under the race detector): they skip
# under -race and run in a pass without it.
NORACE_NAMES := TestEslgoDisconnectOnClose|TestReconnectsAfterRestart|TestResyncAfterFreeSWITCHRestart|TestChannelActionErrors|TestFreeSWITCHRestartEndsItsCalls|TestSystemEventsNodeConnectionAndServer|TestSIPTrunkResyncAfterReconnect|TestCallcenterResyncAfterReconnectAndTenantDelete|TestGeneratedClientIsCurrent|TestOpenAPIDocumentIsValid|TestTypeScriptClientCompiles
# The browser tests (Chromium drives the pages; the team-chat web client)
# run once, without -race: they wait on Chromium and run one at a time, so
# under the race detector they were a third of the longest package's time,
# while the handlers behind them run under -race in the API tests.
BROWSER_TESTS := TestBrowser|TestChatWebClient|TestAxeFindsViolations
BROWSER_PACKAGES := ./internal/web/routes ./internal/web/webui/...
RACE_SKIP := '^($(BROWSER_TESTS))'
# The routes tests that run under the race detector: the ones whose
# subject is goroutines meeting over shared state. Two replicas sharing
# the work, Redis limits and leases; the event streams (SSE, resume,
# slots); idempotency and concurrent repeats; the outages (chaos, database,
# Redis, chat server); the webhook delivery queues and the chat queue to
# ejabberd; sign-in failure limits and web sessions (revocation, rotation,
# streams ended with the session). A new test whose subject is one of
# these goes in this list (a name prefix here covers new tests named
# alike). The other routes tests are one request after another against a
# server whose shared machinery these tests and the other packages' -race
# tests already exercise: they run without the race detector.
ROUTES_RACE_TESTS := TestTwoReplicas|TestRequestsLimitedPerCredentialAcrossReplicas|TestEventLeaseTakeover|TestDuplicateEventsEndToEnd|TestEventStream|TestClosedEventStream|TestDashboardSessionStreamsAndActs|TestMetricsOnEventSocketAndStreams|TestIdempoten|TestConfigWritesHonourIdempotencyKey|TestMessagingIdempotencyKey|TestCDRImportConcurrentRepeats|TestMusicOnHoldFileConcurrentRepeats|TestChaos|TestDatabaseOutage|TestReadinessDuring|TestChatServerOutage|TestOutboundWebhook|TestIncomingWebhook|TestPlatformWebhook|TestChannelMessageLandsInRoomArchive|TestDirectMessageToOfflineUser|TestInboundMessagesReachChatChannel|TestChatSyncCommand|TestFailedAuthenticationLimitedBeforeBcrypt|TestAccountFailureLimit|TestSession
test:
	@echo "make test: building first (a cold cache compiles for a few minutes, with no output), then vet and every package's tests"
	$(GO) mod tidy -diff
	$(GO) build ./...
	$(GO) vet ./...
	@# Compile every test package once with the race detector (and, with
	@# MySQL, once without) before the passes: started side by side on a
	@# stale cache, each go test compiled the packages it shares with the
	@# others (all of internal/ under routes) at the same time.
	$(GO) list -test -export -race ./... >/dev/null
	@if [ -z "$$SWITCHBOARD_TEST_MYSQL_URL" ]; then \
	  echo "make test: SWITCHBOARD_TEST_MYSQL_URL unset: every package with -race on SQLite, then the tests -race skips"; \
	  $(GO) test -race -count=1 -timeout 20m -parallel $(TEST_PARALLEL) -skip $(RACE_SKIP) ./... && \
	  $(GO) test -count=1 -timeout 20m -run '^($(NORACE_NAMES))$$|^($(BROWSER_TESTS))' ./internal/freeswitch/esl/... $(BROWSER_PACKAGES); \
	  exit $$?; \
	fi; \
	$(GO) list -test -export ./... >/dev/null || exit 1; \
	logs=$$(mktemp -d); \
	redis_db() { printf '%s' "$$SWITCHBOARD_TEST_REDIS_URL" | sed -E "s#^(redis://[^/]*)(/[0-9]*)?\$$#\\1/$$1#"; }; \
	( SWITCHBOARD_TEST_BACKENDS=sqlite SWITCHBOARD_TEST_PER_BACKEND_ONLY=1 SWITCHBOARD_TEST_REDIS_URL="$$(redis_db 1)" \
	  $(GO) test -count=1 -timeout 20m -parallel $(TEST_PARALLEL) $(PER_BACKEND_PACKAGES) >$$logs/sqlite 2>&1; echo $$? >$$logs/sqlite.rc ) & \
	( SWITCHBOARD_TEST_DB_SUFFIX=cluster $(MAKE) --no-print-directory test-cluster >$$logs/cluster 2>&1; echo $$? >$$logs/cluster.rc ) & \
	( SWITCHBOARD_TEST_BACKENDS=mysql SWITCHBOARD_TEST_DB_SUFFIX=routes SWITCHBOARD_TEST_REDIS_URL="$$(redis_db 3)" \
	  $(GO) test -race -count=1 -timeout 30m -parallel $(TEST_PARALLEL) -run '^($(ROUTES_RACE_TESTS))' -skip $(RACE_SKIP) ./internal/web/routes >$$logs/routes 2>&1; echo $$? >$$logs/routes.rc ) & \
	( SWITCHBOARD_TEST_BACKENDS=mysql SWITCHBOARD_TEST_DB_SUFFIX=norace SWITCHBOARD_TEST_REDIS_URL="$$(redis_db 2)" \
	  $(GO) test -count=1 -timeout 30m -parallel $(TEST_PARALLEL) -skip '^($(ROUTES_RACE_TESTS)|$(BROWSER_TESTS))' ./internal/web/routes >$$logs/norace 2>&1 && \
	  SWITCHBOARD_TEST_BACKENDS=mysql SWITCHBOARD_TEST_DB_SUFFIX=norace SWITCHBOARD_TEST_REDIS_URL="$$(redis_db 2)" \
	  $(GO) test -count=1 -timeout 20m -run '^($(NORACE_NAMES))$$' ./internal/freeswitch/esl/... >>$$logs/norace 2>&1; echo $$? >$$logs/norace.rc ) & \
	echo "make test: every package but routes with -race on MySQL and Redis (beside it from the start: routes' concurrency tests with -race and its other tests without, the SQLite pass and the Redis Cluster pass; their output comes after)"; \
	SWITCHBOARD_TEST_BACKENDS=mysql $(GO) test -race -count=1 -timeout 30m -parallel $(TEST_PARALLEL) -skip $(RACE_SKIP) $$($(GO) list ./... | grep -v '/internal/web/routes$$'); race=$$?; \
	wait; \
	echo "make test: routes' concurrency tests (ROUTES_RACE_TESTS) with -race on MySQL"; cat $$logs/routes; routes=$$(cat $$logs/routes.rc); \
	echo "make test: routes' other tests, and the tests that hit a race inside eslgo v1.5.2, without -race on MySQL"; cat $$logs/norace; norace=$$(cat $$logs/norace.rc); \
	echo "make test: the per-backend tests without -race on SQLite"; cat $$logs/sqlite; \
	cat $$logs/cluster; \
	echo "make test: once the passes above are done (Chromium starved beside them on a loaded machine), the browser tests without -race on MySQL"; \
	SWITCHBOARD_TEST_BACKENDS=mysql SWITCHBOARD_TEST_DB_SUFFIX=browser SWITCHBOARD_TEST_REDIS_URL="$$(redis_db 4)" \
	  $(GO) test -count=1 -timeout 20m -run '^($(BROWSER_TESTS))' $(BROWSER_PACKAGES); browser=$$?; \
	sqlite=$$(cat $$logs/sqlite.rc); cluster=$$(cat $$logs/cluster.rc); rm -rf $$logs; \
	echo "make test: exit codes: -race on MySQL $$race, routes -race $$routes, routes and eslgo without -race $$norace, SQLite $$sqlite, Redis Cluster $$cluster, browser tests $$browser"; \
	[ $$race -eq 0 ] && [ $$routes -eq 0 ] && [ $$norace -eq 0 ] && [ $$sqlite -eq 0 ] && [ $$cluster -eq 0 ] && [ $$browser -eq 0 ]

# The Redis-touching tests once more on a Redis Cluster named by
# SWITCHBOARD_TEST_REDIS_CLUSTER_URL (redis+cluster://h1:7000,…; .ci/run
# starts a local three-master one), without -race to keep the run short:
# the call tracker, the XML cache, the event lease and the URL forms, and
# the HTTP tests of what lives in Redis (change stream and SSE resume,
# idempotency, rate limits, two replicas on one Redis, web sessions). The HTTP tests pair
# it with SWITCHBOARD_TEST_MYSQL_URL. Skipped when the variable is unset.
# Only the packages whose tests open the Redis that variable names: the
# others beside them (fakefs; lease, whose tests use a fake; backoff, …) never
# read it, so on the cluster they would only run the same tests again.
CLUSTER_PACKAGES := ./internal/freeswitch/calls ./internal/freeswitch/fsxml ./internal/freeswitch/esl ./internal/platform/redisurl ./internal/web/websession
CLUSTER_ROUTES := '^(TestEventStreamResumesWithLastEventID|TestEventStreamIsTenantScoped|TestIdempotentCall|TestDuplicateEventsEndToEnd|TestEventLeaseTakeover|TestTwoReplicasShareTheWork|TestRequestsLimitedPerCredentialAcrossReplicas|TestFailedAuthenticationLimitedBeforeBcrypt|TestIdempotencyPendingExpiresWhenTheReplicaDies|TestIncomingWebhookRateLimitAndPermission|TestInboundDIDCallBelongsToItsTenant|TestDirectoryChangeFlushesFreeSWITCHCache|TestMessagingSendStatusAndList|TestSessionLogin|TestSessionRevokedOnPasswordChange|TestSessionLogout|TestSessionRotation)$$'
test-cluster:
	@if [ -z "$$SWITCHBOARD_TEST_REDIS_CLUSTER_URL" ]; then echo "make test: SWITCHBOARD_TEST_REDIS_CLUSTER_URL unset, Redis Cluster pass skipped"; exit 0; fi; \
	echo "make test: the Redis-touching tests again on the Redis Cluster $$SWITCHBOARD_TEST_REDIS_CLUSTER_URL"; \
	export SWITCHBOARD_TEST_REDIS_URL="$$SWITCHBOARD_TEST_REDIS_CLUSTER_URL"; \
	$(GO) test -count=1 $(CLUSTER_PACKAGES) & pkgs=$$!; \
	$(GO) test -count=1 -parallel $(TEST_PARALLEL) -run $(CLUSTER_ROUTES) ./internal/web/routes; routes=$$?; \
	wait $$pkgs && exit $$routes

# The performance benchmarks (figures in BENCHMARKS.md). They use MySQL and
# real Redis from SWITCHBOARD_BENCH_MYSQL_URL / SWITCHBOARD_BENCH_REDIS_URL
# (or the TEST ones), else a SQLite file and the in-process Redis. The XML
# benchmark (cached, cold, storm and after-a-restart modes; `sbbench xml
# -users 250000` for the scale table) runs on SQLite always and again on
# MySQL when it is configured.
bench:
	env -u SWITCHBOARD_BENCH_MYSQL_URL -u SWITCHBOARD_TEST_MYSQL_URL $(GO) run ./cmd/sbbench xml
	@if [ -n "$$SWITCHBOARD_BENCH_MYSQL_URL$$SWITCHBOARD_TEST_MYSQL_URL" ]; then $(GO) run ./cmd/sbbench xml; fi
	$(GO) run ./cmd/sbbench tracker
	$(GO) run ./cmd/sbbench call
	$(GO) run ./cmd/sbbench messaging
	$(GO) run ./cmd/sbbench chat
	$(GO) run ./cmd/sbbench cdrimport
	$(GO) run ./cmd/sbbench webhooks
	@echo "configuration-manager pages with 1,000 objects (cold load in Chromium):"
	@SWITCHBOARD_BENCH_PAGES=1 $(GO) test -count=1 -v -run '^TestBrowserManagerPagesStayLightWithAThousandObjects$$' ./internal/web/routes | grep -E '^(page cost|--- |FAIL)'

# The team-chat web client served at /chat/: converse.js from npm at this
# exact version, its dist files vendored into chat/webclient/dist (committed,
# so builds need no npm). Change the version, run this, try it, commit.
CONVERSE_VERSION := 14.0.0
webclient:
	bash internal/comms/chat/webclient/vendor.sh $(CONVERSE_VERSION)

# Screenshots of the API reference and the live-calls dashboard
# (docs/apiref.png, docs/dashboard.png), taken by the browser test in
# Debian's chromium.
screenshots:
	SWITCHBOARD_SCREENSHOTS=$(CURDIR)/docs $(GO) test -count=1 -run '^(TestBrowserReferenceAndDashboard|TestBrowserDashboard|TestBrowserDashboardFits)$$' ./internal/web/webui
	SWITCHBOARD_SCREENSHOTS=$(CURDIR)/docs $(GO) test -count=1 -run '^TestBrowserManagerPagesStayLightWithAThousandObjects$$' ./internal/web/routes

# The fault suite (docs/deploy.md, "Health checks and outages"): every
# outage test, with the figures of the two-replica run (writes
# acknowledged, refused, lost, duplicated; fetches, stale answers, errors;
# seconds to recover). make test runs the same tests; this prints them.
# The database outages need MySQL (SWITCHBOARD_TEST_MYSQL_URL, as make test).
CHAOS_TESTS := '^(TestChaosOutagesLoseNothing|TestDatabaseOutageAnswers503|TestReadinessDuringRedisOutage|TestReadinessDuringDatabaseOutage|TestConfigWritesHonourIdempotencyKey|TestIdempotencyPendingExpiresWhenTheReplicaDies|TestNoStaleAnswerRightAfterRedisReturns|TestDatabaseOutageServesWhatMemoryProves|TestCallsEndingDuringRedisOutageGetTheirCDR|TestHeldEventsOfADeadReplicaGetTheirCDR|TestGracefulShutdownDrains|TestEventLeaseTakeover|TestChatServerOutage)$$'
chaos:
	@out=$$(mktemp); $(GO) test -count=1 -v -run $(CHAOS_TESTS) ./... >$$out 2>&1; rc=$$?; \
	grep -E '^(--- |ok|FAIL)|chaos figures' $$out; rm -f $$out; exit $$rc

fuzz:
	$(GO) test ./internal/freeswitch/dialplan -run '^$$' -fuzz FuzzDirectoryEscaping -fuzztime 30s
	$(GO) test ./internal/freeswitch/dialplan -run '^$$' -fuzz FuzzDialplanEscaping -fuzztime 30s
	$(GO) test ./internal/freeswitch/dialplan -run '^$$' -fuzz FuzzCallerData -fuzztime 30s
	$(GO) test ./internal/freeswitch/dialplan -run '^$$' -fuzz FuzzLocalStreamConf -fuzztime 30s
	$(GO) test ./internal/freeswitch/dialplan -run '^$$' -fuzz FuzzCallcenterConf -fuzztime 30s
	$(GO) test ./internal/freeswitch/dialplan -run '^$$' -fuzz FuzzVoicemailDirectoryConf -fuzztime 30s
	$(GO) test ./internal/freeswitch/dialplan -run '^$$' -fuzz FuzzFeatureCodes -fuzztime 30s
	$(GO) test ./internal/freeswitch/dialplan -run '^$$' -fuzz FuzzHuntOrder -fuzztime 30s
	$(GO) test ./internal/freeswitch/provision -run '^$$' -fuzz FuzzProvisioning -fuzztime 30s
	$(GO) test ./internal/freeswitch/dialplan -run '^$$' -fuzz FuzzHoldMusicEscaping -fuzztime 30s

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

ci:
	bash .ci/run
