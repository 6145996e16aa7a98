package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/backoff"
	"github.com/switchboard/switchboard/internal/platform/egress"
	"github.com/switchboard/switchboard/internal/platform/worker"
)

// Options tune a Service; the zero value is usable.
type Options struct {
	// Group keeps the deliveries of servers sharing a database without
	// being one installation apart (the outbox group; tests).
	Group string
	// AllowPrivate lets deliveries reach loopback, private and link-local
	// addresses (development and test installations only).
	AllowPrivate bool
	// AllowHTTP accepts plain http:// URLs (development mode).
	AllowHTTP bool
	// DisableAfter is how many consecutive failed attempts disable a
	// webhook (default 20).
	DisableAfter int
	// RetryMin and RetryMax bound the backoff (default 1 s and 10 min).
	RetryMin, RetryMax time.Duration
	// Workers bounds concurrent requests (default 64).
	Workers int
	// Poll is how often due deliveries are looked for without a wake-up
	// (default 1 s).
	Poll time.Duration
	// MaxResponse is how much of an answer is read (default 64 KiB).
	MaxResponse int64
	// Keep is how long finished deliveries stay in the log (default 7 days).
	Keep   time.Duration
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.DisableAfter <= 0 {
		o.DisableAfter = 20
	}
	if o.RetryMin <= 0 {
		o.RetryMin = time.Second
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 10 * time.Minute
	}
	if o.Workers <= 0 {
		o.Workers = 64
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.MaxResponse <= 0 {
		o.MaxResponse = 64 << 10
	}
	if o.Keep <= 0 {
		o.Keep = 7 * 24 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Service turns outbox changes into deliveries and attempts them.
type Service struct {
	st     *models.Store
	db     models.Querier
	ignore string
	opts   Options
	log    *slog.Logger
	client *http.Client
	hooks  *hookCache
	// loop is the delivery worker (Run); Wake, and each attempt's end, wake it.
	loop *worker.Loop
}

// New builds the service over the store's database.
func New(st *models.Store, opts Options) *Service {
	opts.defaults()
	ignore := "INSERT IGNORE"
	if st.Dialect().SQLite {
		ignore = "INSERT OR IGNORE"
	}
	return &Service{
		st: st, db: st.Querier(), ignore: ignore, opts: opts, log: opts.Logger,
		client: egress.NewClient(egress.Options{Guard: egress.Guard{AllowAll: opts.AllowPrivate}, Timeout: 30 * time.Second, MaxBody: opts.MaxResponse}),
		hooks:  &hookCache{st: st, ttl: 2 * time.Second},
		loop:   worker.New(worker.Options{Name: "webhooks", Poll: opts.Poll, Logger: opts.Logger}),
	}
}

var (
	_ changes.EventSubscriber = (*Service)(nil)
	_ changes.BatchSubscriber = (*Service)(nil)
)

// Name is the outbox subscriber name.
func (s *Service) Name() string { return "webhooks" }

// WantsEvents asks the dispatcher for events as well as changes.
func (s *Service) WantsEvents() bool { return true }

// Handle writes the deliveries of one change. It is idempotent: the rows
// of a change handed over twice already exist and are left alone.
func (s *Service) Handle(ctx context.Context, c changes.Change) error {
	if slices.Contains(Kinds, c.Resource) && c.Op != changes.Event {
		s.hooks.forget()
		if err := s.enabledByWrite(ctx, c); err != nil {
			return err
		}
	}
	ev, err := eventOf(c)
	if err != nil {
		return fmt.Errorf("webhooks: event of change %d: %w", c.ID, err)
	}
	targets, err := s.targets(ctx, ev, nil)
	if err != nil || len(targets) == 0 {
		return err
	}
	body, err := ev.body()
	if err != nil {
		return fmt.Errorf("webhooks: encode %s: %w", ev.ID, err)
	}
	if err := s.insert(ctx, ev, body, targets); err != nil {
		return err
	}
	s.Wake()
	return nil
}

// HandleBatch writes the deliveries of many changes with multi-row
// INSERTs in one transaction (the dispatcher's batch); like Handle it is
// idempotent.
func (s *Service) HandleBatch(ctx context.Context, cs []changes.Change) error {
	// A webhook written after an event is already in its new state in the
	// database: the event sees the webhook as it was then, which is the
	// before of the first write after the event, in this batch or after
	// it (the dispatcher may take a disable and an event in one batch and
	// the enable in the next, and the database already says enabled).
	type write struct {
		at      int
		enabled bool
		reason  bool
	}
	writes := map[string][]write{}
	note := func(at int, c changes.Change) {
		var before struct {
			Enabled bool    `json:"enabled"`
			Reason  *string `json:"disabled_reason"`
		}
		_ = json.Unmarshal(c.Before, &before)
		key := c.Resource + "/" + c.Key
		writes[key] = append(writes[key], write{at: at, enabled: before.Enabled, reason: before.Reason != nil && *before.Reason != ""})
	}
	for i, c := range cs {
		if slices.Contains(Kinds, c.Resource) && c.Op == changes.Update {
			note(i, c)
		}
	}
	if len(cs) > 0 {
		later, err := s.st.OutboxUpdatesAfter(ctx, cs[len(cs)-1].ID, Kinds)
		if err != nil {
			return fmt.Errorf("webhooks: %w", err)
		}
		for _, c := range later {
			note(len(cs), c)
		}
	}
	var rows []row
	for i, c := range cs {
		asOf := func(h *Hook) *Hook {
			for _, w := range writes[h.Kind+"/"+strconv.FormatInt(h.ID, 10)] {
				if w.at > i {
					then := *h
					then.Enabled, then.Suspended = w.enabled, !w.enabled && w.reason
					return &then
				}
			}
			return h
		}
		if slices.Contains(Kinds, c.Resource) && c.Op != changes.Event {
			// Webhook writes change what later events target: apply the
			// rows so far, then this change on its own.
			if err := s.insertRows(ctx, rows); err != nil {
				return err
			}
			rows = nil
			if err := s.Handle(ctx, c); err != nil {
				return err
			}
			continue
		}
		ev, err := eventOf(c)
		if err != nil {
			return fmt.Errorf("webhooks: event of change %d: %w", c.ID, err)
		}
		targets, err := s.targets(ctx, ev, asOf)
		if err != nil {
			return err
		}
		if len(targets) == 0 {
			continue
		}
		body, err := ev.body()
		if err != nil {
			return fmt.Errorf("webhooks: encode %s: %w", ev.ID, err)
		}
		for _, h := range targets {
			rows = append(rows, row{ev: ev, body: body, hook: h})
		}
	}
	if err := s.insertRows(ctx, rows); err != nil {
		return err
	}
	if len(rows) > 0 {
		s.Wake()
	}
	return nil
}

// enabledByWrite releases the held deliveries of a webhook a client
// enabled through the configuration API.
func (s *Service) enabledByWrite(ctx context.Context, c changes.Change) error {
	if c.Op != changes.Update {
		return nil
	}
	var before, after struct {
		ID      int64 `json:"id"`
		Enabled bool  `json:"enabled"`
	}
	_ = json.Unmarshal(c.Before, &before)
	if err := json.Unmarshal(c.After, &after); err != nil || before.Enabled || !after.Enabled {
		return nil
	}
	return s.release(ctx, s.db, c.Resource, after.ID)
}

// targets are the enabled webhooks that want ev. asOf, when set, gives a
// webhook as it stood when ev happened (a later write of it is already in
// the database).
func (s *Service) targets(ctx context.Context, ev *Event, asOf func(*Hook) *Hook) ([]*Hook, error) {
	var lists [][]*Hook
	add := func(kind, tenant string) error {
		hooks, err := s.hooks.list(ctx, kind, tenant)
		lists = append(lists, hooks)
		return err
	}
	if ev.system() {
		if err := add(KindSystem, ""); err != nil {
			return nil, err
		}
	} else {
		if ev.Tenant != "" {
			if err := add(KindTenant, ev.Tenant); err != nil {
				return nil, err
			}
		}
		if err := add(KindPlatform, ""); err != nil {
			return nil, err
		}
	}
	var out []*Hook
	for _, l := range lists {
		for _, h := range l {
			if asOf != nil {
				h = asOf(h)
			}
			if h.wants(ev) {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

// Wake makes the worker look for due deliveries now; it never blocks.
func (s *Service) Wake() { s.loop.Wake() }

// Run attempts due deliveries while leading reports true (this replica
// holds the outbox lease), until ctx ends. Up to Workers requests are in
// flight; one webhook's deliveries of one subject (a call) go one at a
// time, in order. Succeeded attempts are recorded in batches (one
// transaction for many), failures one by one (they may disable the
// webhook). A delivery stays "in flight" until its attempt is recorded, so
// a copy of its row read meanwhile is never sent twice. In-flight attempts
// are abandoned at shutdown without being counted: the row stays due;
// attempts already answered are recorded first.
func (s *Service) Run(ctx context.Context, leading func() bool) {
	var mu sync.Mutex
	// inflight holds deliveries from their send until their attempt is
	// recorded; sending counts the requests under way (bounded by Workers).
	inflight := map[int64]bool{}
	sending := 0
	busy := map[string]bool{} // "<kind>/<hook id>/<subject>" in flight
	// finished remembers when recent attempts were recorded: a row read
	// before that is a stale copy and must not be sent again.
	finished := map[int64]time.Time{}
	release := func(d *Delivery) {
		mu.Lock()
		delete(inflight, d.ID)
		if d.Subject != "" {
			delete(busy, subjectKey(d))
		}
		finished[d.ID] = time.Now()
		mu.Unlock()
	}
	successes := make(chan success, s.opts.Workers)
	recorderDone := make(chan struct{})
	go func() {
		defer close(recorderDone)
		s.recordLoop(ctx, successes, release)
	}()
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		close(successes)
		<-recorderDone
	}()
	lastPrune, lastClean := time.Now(), time.Now()
	// A step starts the due deliveries there are free workers for; it never
	// waits for them: the end of an attempt wakes the loop instead.
	s.loop.Run(ctx, func(ctx context.Context) (bool, error) {
		if !leading() {
			return false, nil
		}
		var err error
		mu.Lock()
		free := s.opts.Workers - sending
		mu.Unlock()
		if free > 0 {
			readAt := time.Now()
			// Read past the free slots: rows that wait behind their
			// subject or are in flight are skipped.
			var batch []Delivery
			if batch, err = s.due(ctx, free+s.opts.Workers); err != nil {
				err = fmt.Errorf("read due deliveries: %w", err)
			}
			mu.Lock()
			for i := range batch {
				d := &batch[i]
				if end, ok := finished[d.ID]; inflight[d.ID] || sending >= s.opts.Workers || (ok && !end.Before(readAt)) {
					continue
				}
				if d.Subject != "" {
					if busy[subjectKey(d)] {
						continue // an earlier event of the same call goes first
					}
					busy[subjectKey(d)] = true
				}
				inflight[d.ID] = true
				sending++
				wg.Add(1)
				go func() {
					defer wg.Done()
					recorded := !s.attempt(ctx, d, successes, func() {
						mu.Lock()
						sending--
						mu.Unlock()
					})
					if recorded {
						release(d)
						s.loop.Wake()
					}
				}()
			}
			mu.Unlock()
		}
		if time.Since(lastClean) > 5*time.Second {
			lastClean = time.Now()
			mu.Lock()
			for id, end := range finished {
				if time.Since(end) > 10*time.Second {
					delete(finished, id)
				}
			}
			mu.Unlock()
		}
		if time.Since(lastPrune) > time.Minute {
			lastPrune = time.Now()
			if _, err := s.prune(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("webhooks: prune", "error", err)
			}
		}
		return false, err
	})
}

// subjectKey names a webhook's deliveries of one subject.
func subjectKey(d *Delivery) string {
	return hookLabel(d.HookKind, d.HookID) + "/" + d.Subject
}

// recordBatch bounds the succeeded attempts recorded in one transaction;
// recordLinger is how long the recorder waits for more before it writes.
const (
	recordBatch  = 256
	recordLinger = 5 * time.Millisecond
)

// recordLoop records succeeded attempts in batches until in is closed,
// then releases their deliveries and wakes the loop. At shutdown what was
// answered is still recorded (on a context without the cancellation).
func (s *Service) recordLoop(ctx context.Context, in <-chan success, release func(*Delivery)) {
	wctx := context.WithoutCancel(ctx)
	for first := range in {
		batch := []success{first}
		linger := time.NewTimer(recordLinger)
	fill:
		for len(batch) < recordBatch {
			select {
			case x, ok := <-in:
				if !ok {
					break fill
				}
				batch = append(batch, x)
			case <-linger.C:
				break fill
			}
		}
		linger.Stop()
		if err := s.recordSuccesses(wctx, batch); err != nil {
			// Not recorded: the rows stay pending and are sent again (at
			// least once); receivers de-duplicate on X-Webhook-Id.
			s.log.Warn("webhooks: record succeeded deliveries", "error", err)
		}
		for _, b := range batch {
			release(b.d)
		}
		s.loop.Wake()
	}
}

// attempt sends one due delivery. A success is handed to the recorder (it
// reports true: the recorder releases the delivery); anything else is
// recorded here.
// sent is called once the request is over (its worker slot is free).
func (s *Service) attempt(ctx context.Context, d *Delivery, successes chan<- success, sent func()) bool {
	sentOnce := sync.OnceFunc(sent)
	defer sentOnce()
	log := s.log.With("delivery", d.ID, "webhook", hookLabel(d.HookKind, d.HookID))
	h, err := s.hooks.get(ctx, d.HookKind, d.Tenant, d.HookID)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("webhooks: read webhook", "error", err)
		}
		return false
	}
	switch {
	case h == nil:
		err = s.setStatus(ctx, d.ID, StatusDead, "the webhook no longer exists")
	case !h.Enabled:
		err = s.setStatus(ctx, d.ID, StatusHeld, "the webhook is disabled")
	default:
		r := s.send(ctx, h, d)
		sentOnce()
		if r.ok() {
			successes <- success{d: d, h: h, r: r}
			return true
		}
		if ctx.Err() != nil {
			return false // shutting down: not an attempt; the row stays due
		}
		err = s.record(context.WithoutCancel(ctx), d, h, r, true)
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("webhooks: record delivery", "error", err)
	}
	return false
}

// send makes one signed request.
func (s *Service) send(ctx context.Context, h *Hook, d *Delivery) result {
	u, err := egress.CheckURL(h.URL, s.opts.AllowHTTP)
	if err != nil {
		return result{err: err.Error()}
	}
	body := []byte(d.Body)
	contentType := "application/json"
	if h.ContentType == "application/x-www-form-urlencoded" {
		body = []byte(url.Values{"payload": {d.Body}}.Encode())
		contentType = h.ContentType
	}
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return result{err: "build request: " + err.Error()}
	}
	for k, v := range h.Headers {
		req.Header.Set(k, v)
	}
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "Switchboard-Webhooks/1")
	req.Header.Set(HeaderID, d.EventID)
	req.Header.Set(HeaderEvent, d.EventType)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(h.Secret, ts, body))
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return result{latency: time.Since(start), err: requestError(err, h.Timeout)}
	}
	defer resp.Body.Close()
	// Read at most MaxResponse: a receiver cannot make us buffer more.
	got, rerr := io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxResponse))
	r := result{code: resp.StatusCode, latency: time.Since(start), response: string(got)}
	if rerr != nil && !r.ok() {
		r.err = "reading the answer: " + rerr.Error()
	}
	if !r.ok() && r.err == "" {
		r.err = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return r
}

// requestError describes a failed request without Go's URL-quoting noise.
func requestError(err error, timeout time.Duration) string {
	if errors.Is(err, egress.ErrRefused) {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return err.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("timed out after %s", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// backoff is the wait before attempt n+1: RetryMin doubled per attempt,
// capped at RetryMax, with "equal jitter" (half fixed, half random) so
// deliveries that failed together do not retry together.
func (s *Service) backoff(attempts int) time.Duration {
	return backoff.Delay(s.opts.RetryMin, s.opts.RetryMax, attempts)
}
