package fsxml

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/platform/sealedfile"
)

// Models across a restart. Right after a restart every phone re-registers
// and calls resume, and a preload of every tenant's rows takes seconds
// (1,000 tenants of 50 users: 1-2 s; a million users: some 20 s). So a
// replica that stops keeps the tenant models it holds in a file
// (Config.SnapshotPath), and the next process of the same binary restores
// them as soon as memory can be trusted, before the preload reads the
// rest. Fetches of those first moments wait for the restore (a copy of
// flat blocks: the extensions are packed) instead of building models.
//
// A restored model is only used when nothing of its tenant changed since
// it was saved: the file records the outbox position its models were
// current at (every change up to it was known, and no model older than
// what it knew was saved), and a tenant with a change after it is not
// restored. Outbox ids are handed out without gaps in commit order, so
// "after it" misses nothing; when those changes cannot all be read (the
// outbox was pruned past the position) nothing is restored. The file
// holds what the models hold, SIP secrets in clear among them, so it is
// sealed with a key derived from the server key (sealedfile), and it is
// read only by the binary that wrote it (the models' layout is its own).

// snapshotFormat changes when what the file holds changes meaning.
const snapshotFormat = 1

// snapshotHeader is the file's clear header: what must match before the
// models are used.
type snapshotHeader struct {
	Format          int       `json:"format"`
	Binary          string    `json:"binary"`
	Installation    string    `json:"installation"`
	ModelExtensions int       `json:"model_extensions"`
	Cursor          int64     `json:"cursor"`
	SavedAt         time.Time `json:"saved_at"`
	Tenants         int       `json:"tenants"`
}

// savedModel is one tenant model in the file, most recently used first.
type savedModel struct {
	Key           string
	ID            int64
	AllExtensions bool
	Weight        int // the model's own
	CacheWeight   int // what the cache counted (the routing part included)
	ExtWeight     int
	// Directory is the directory part without its packed extensions
	// (Extensions holds them when they are structs); Extensions the
	// packed ones.
	Directory  *dialplan.TenantSnapshot
	Extensions *dialplan.ExtensionBlocks
	// Routing is the routing part without extensions (they are the
	// directory part's); nil when it was not read.
	Routing *dialplan.TenantSnapshot
}

// snapshotKey seals the file: a key of its own, derived from the server
// key every replica shares.
func (s *Service) snapshotKey() []byte { return s.st.Sealer().Derive("xml-model-snapshot") }

// binaryIdentity names the running binary: the file is read back only by
// the same one (a new release may lay its models out differently).
func binaryIdentity() string {
	id := "unknown"
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			id = strconv.FormatInt(fi.Size(), 10) + "@" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		id += " " + bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				id += " " + s.Value
			}
		}
	}
	return id
}

// saveModels writes the tenant models current now to the file. It runs
// when the service closes.
func (s *Service) saveModels() error {
	path := s.cfg.SnapshotPath
	if path == "" || s.st == nil || s.tables == nil {
		return nil
	}
	start := time.Now()
	// The position first: a change polled after it was read moves its
	// tenant's generation, and that tenant's model is then not saved.
	s.note.pollMu.Lock()
	cursor, positioned := s.note.cursor, s.note.positioned
	s.note.pollMu.Unlock()
	if !positioned {
		return nil // nothing was ever trusted
	}
	epoch := s.gens.epoch.Load()
	var keep []lruItem[tenantEntry]
	for _, it := range s.models.tenants.entries() {
		e := it.val
		if e.m == nil || e.m.snap == nil || e.m.degraded || e.epoch != epoch || e.gen != s.gens.gen(it.key) {
			continue
		}
		keep = append(keep, it)
	}
	header, err := json.Marshal(snapshotHeader{Format: snapshotFormat, Binary: binaryIdentity(), Installation: s.keyPrefix,
		ModelExtensions: s.modelExtensions, Cursor: cursor, SavedAt: time.Now().UTC(), Tenants: len(keep)})
	if err != nil {
		return err
	}
	w, err := sealedfile.Create(path, s.snapshotKey(), header)
	if err != nil {
		return err
	}
	enc := gob.NewEncoder(w)
	// The tenants first, so the next process knows at once which fetches
	// to hold until their model is read (and which not to).
	keys := make([]string, len(keep))
	for i, it := range keep {
		keys[i] = it.key
	}
	if err := enc.Encode(keys); err != nil {
		w.Abort()
		return fmt.Errorf("save xml models: %w", err)
	}
	for _, it := range keep {
		if err := enc.Encode(saved(it)); err != nil {
			w.Abort()
			return fmt.Errorf("save xml models: %w", err)
		}
	}
	if err := w.Commit(); err != nil {
		return err
	}
	s.log.Info("xml models saved for the next start", "tenants", len(keep), "path", path, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// saved is the file's record of one cached model.
func saved(it lruItem[tenantEntry]) *savedModel {
	m := it.val.m
	rec := &savedModel{Key: it.key, ID: m.id, AllExtensions: m.allExtensions, Weight: m.weight, CacheWeight: it.weight, ExtWeight: m.extWeight}
	dir := *m.snap
	rec.Directory = &dir
	if b, ok := m.snap.ExtensionBlocks(); ok {
		rec.Extensions = &b
	}
	if r := m.routing.Load(); r != nil {
		routing := *r
		routing.Extensions = nil
		rec.Routing = &routing
	}
	return rec
}

// savedFile is the file being read: decoded while the service starts
// (beside its subscription and its listener), each model checked and
// stored once memory can be trusted.
type savedFile struct {
	header snapshotHeader
	models chan restoredModel // in the file's order; closed at its end
	err    error              // why reading stopped, set before models closes
	took   time.Duration
}

type restoredModel struct {
	key    string
	weight int // what the cache counts
	m      *tenantModel
}

// readSaved decodes the file; it runs when the service starts. It hands
// the file to restoreModels (ready) once the header and the list of
// tenants are read, and the models as they are decoded.
func (s *Service) readSaved(path string, waits *restoreWaits, ready chan<- *savedFile) {
	f := &savedFile{}
	start := time.Now()
	defer func() {
		f.took = time.Since(start)
		if f.models == nil {
			f.models = make(chan restoredModel)
			ready <- f
		}
		close(f.models)
	}()
	r, raw, err := sealedfile.Open(path, s.snapshotKey())
	if err != nil {
		f.err = err
		return
	}
	defer r.Close()
	h := &f.header
	if err := json.Unmarshal(raw, h); err != nil {
		f.err = fmt.Errorf("%w: unreadable header", errSnapshotStale)
		return
	}
	switch {
	case h.Format != snapshotFormat || h.Binary != binaryIdentity():
		f.err = fmt.Errorf("%w: written by another release", errSnapshotStale)
	case h.Installation != s.keyPrefix:
		f.err = fmt.Errorf("%w: written for another installation", errSnapshotStale)
	case h.ModelExtensions != s.modelExtensions:
		f.err = fmt.Errorf("%w: written under another model size", errSnapshotStale)
	}
	if f.err != nil {
		return
	}
	dec := gob.NewDecoder(r)
	var keys []string
	if err := dec.Decode(&keys); err != nil {
		f.err = fmt.Errorf("read saved models: %w", err)
		return
	}
	waits.expect(keys)
	// Room for every model: decoding never waits for the restore.
	f.models = make(chan restoredModel, len(keys))
	ready <- f
	for range keys {
		var rec savedModel
		if err := dec.Decode(&rec); err != nil {
			f.err = fmt.Errorf("read saved models: %w", err)
			return
		}
		m, err := rec.model()
		if err != nil {
			f.err = err
			return
		}
		f.models <- restoredModel{key: rec.Key, weight: rec.CacheWeight, m: m}
	}
}

// restoreModels puts the saved models that are still current in the
// cache. It runs once memory is trusted, before the first preload, and
// releases the fetches waiting for it (restoreWaits) when done.
func (s *Service) restoreModels(ctx context.Context) {
	waits := s.restoring.Load()
	if waits == nil {
		return
	}
	defer func() {
		s.restoring.Store(nil)
		waits.finish()
	}()
	var f *savedFile
	select {
	case f = <-s.saved:
	case <-ctx.Done():
		return
	}
	start := time.Now()
	n, skipped, err := s.restore(ctx, f)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, errSnapshotStale):
		s.log.Info("xml models: the saved models are not used", "path", s.cfg.SnapshotPath, "reason", err)
	case err != nil:
		s.log.Warn("xml models: restoring the saved models stopped; the rest are read from the database", "path", s.cfg.SnapshotPath, "restored", n, "error", err)
	default:
		s.log.Info("xml models restored", "tenants", n, "changed since, read again", skipped,
			"file_read_in", f.took.Round(time.Millisecond), "took", time.Since(start).Round(time.Millisecond))
	}
}

// errSnapshotStale says why a file's models cannot be used as a whole.
var errSnapshotStale = errors.New("saved models stale")

func (s *Service) restore(ctx context.Context, f *savedFile) (restored, skipped int, err error) {
	if cap(f.models) == 0 && f.err != nil {
		// Nothing to restore: the file was refused before its models.
		// (With no room for models the reader writes f.err no more;
		// otherwise f.err is read only once the models channel closed.)
		return 0, 0, f.err
	}
	// The generations before the outbox is read: a change after this is
	// either in what the outbox says or moves its scope past the
	// generation a model is stored under.
	epoch, known := s.gens.all()
	changed, complete, err := s.st.OutboxScopesAfter(ctx, f.header.Cursor)
	if err != nil {
		return 0, 0, err
	}
	if !complete {
		return 0, 0, fmt.Errorf("%w: the changes since it was saved were pruned from the outbox", errSnapshotStale)
	}
	full := false
	for r := range f.models {
		switch e := (tenantEntry{epoch: epoch, gen: known[r.key], m: r.m}); {
		case full || changed[r.key]:
			skipped++
		case s.gens.current(r.key).tgen != e.gen || s.gens.epoch.Load() != epoch:
			skipped++ // changed while restoring
		case s.models.tenants.putIfOlder(r.key, e, r.weight, false):
			restored++
		default:
			// Built on demand meanwhile, or the budget is full: the rest
			// is then read from the database as the preload goes.
			_, w := s.models.tenants.stats()
			full = w+r.weight > s.models.tenants.max
		}
	}
	return restored, skipped, f.err
}

// restoreWaits holds fetches whose tenant's saved model is not stored
// yet, until the restore ends; a tenant the file does not hold waits for
// nothing once the file's tenants are known. Fetches are not released
// tenant by tenant: right after a restart every tenant is asked for at
// once, and renders running beside the restore only slowed it (a million
// users: 7 % of bare in the first second against 14 % waiting for the
// whole restore, which then has both cores).
type restoreWaits struct {
	known chan struct{} // closed once keys is set or the restore ended
	done  chan struct{} // closed when the restore ended
	once  sync.Once
	mu    sync.Mutex
	keys  map[string]bool // the file's tenants
}

func newRestoreWaits() *restoreWaits {
	return &restoreWaits{known: make(chan struct{}), done: make(chan struct{})}
}

// expect sets the tenants the file holds.
func (w *restoreWaits) expect(keys []string) {
	w.mu.Lock()
	w.keys = make(map[string]bool, len(keys))
	for _, k := range keys {
		w.keys[k] = true
	}
	w.mu.Unlock()
	w.once.Do(func() { close(w.known) })
}

// finish releases every fetch still waiting.
func (w *restoreWaits) finish() {
	w.once.Do(func() { close(w.known) })
	close(w.done)
}

// wait returns once key's saved model is stored (or will not be).
func (w *restoreWaits) wait(ctx context.Context, key string) error {
	select {
	case <-w.known:
	case <-ctx.Done():
		return ctx.Err()
	}
	w.mu.Lock()
	held := w.keys[key]
	w.mu.Unlock()
	if !held {
		return nil
	}
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// model rebuilds the tenant model a record holds.
func (rec *savedModel) model() (*tenantModel, error) {
	if rec.Directory == nil {
		return nil, errors.New("read saved models: a record without its model")
	}
	dir := rec.Directory
	if rec.Extensions != nil {
		if err := dir.SetExtensionBlocks(*rec.Extensions); err != nil {
			return nil, fmt.Errorf("read saved models: %w", err)
		}
	}
	dir.Prepare()
	m := &tenantModel{id: rec.ID, snap: dir, allExtensions: rec.AllExtensions, weight: rec.Weight, extWeight: rec.ExtWeight}
	if full := rec.Routing; full != nil {
		// As routingSnapshot builds it: the directory part's extensions
		// and index, shared.
		full.Extensions = dir.Extensions
		full.Prepare()
		full.ShareIndex(dir)
		m.routing.Store(full)
	}
	return m, nil
}
