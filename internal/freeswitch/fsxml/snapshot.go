package fsxml

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
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

// savedModels are the models read from the file, decoded while the
// service starts (beside its subscription and its listener), checked and
// stored once memory can be trusted.
type savedModels struct {
	header snapshotHeader
	models []restoredModel
	err    error // why reading stopped (the models before it are good)
	took   time.Duration
}

type restoredModel struct {
	key    string
	weight int // what the cache counts
	m      *tenantModel
}

// readSaved decodes the file's models; it runs when the service starts,
// and restoreModels waits for it.
func (s *Service) readSaved(path string, done chan<- *savedModels) {
	out := &savedModels{}
	start := time.Now()
	defer func() {
		out.took = time.Since(start)
		done <- out
	}()
	r, raw, err := sealedfile.Open(path, s.snapshotKey())
	if err != nil {
		out.err = err
		return
	}
	defer r.Close()
	h := &out.header
	if err := json.Unmarshal(raw, h); err != nil {
		out.err = fmt.Errorf("%w: unreadable header", errSnapshotStale)
		return
	}
	switch {
	case h.Format != snapshotFormat || h.Binary != binaryIdentity():
		out.err = fmt.Errorf("%w: written by another release", errSnapshotStale)
	case h.Installation != s.keyPrefix:
		out.err = fmt.Errorf("%w: written for another installation", errSnapshotStale)
	case h.ModelExtensions != s.modelExtensions:
		out.err = fmt.Errorf("%w: written under another model size", errSnapshotStale)
	}
	if out.err != nil {
		return
	}
	out.models = make([]restoredModel, 0, h.Tenants)
	dec := gob.NewDecoder(r)
	for {
		var rec savedModel
		if err := dec.Decode(&rec); err != nil {
			if !errors.Is(err, io.EOF) {
				out.err = fmt.Errorf("read saved models: %w", err)
			}
			return
		}
		m, err := rec.model()
		if err != nil {
			out.err = err
			return
		}
		out.models = append(out.models, restoredModel{key: rec.Key, weight: rec.CacheWeight, m: m})
	}
}

// restoreModels puts the saved models that are still current in the
// cache. It runs once memory is trusted, before the first preload, and
// releases the fetches waiting for it (waitRestore) when done.
func (s *Service) restoreModels(ctx context.Context) {
	defer s.restored()
	if s.saved == nil {
		return
	}
	var saved *savedModels
	select {
	case saved = <-s.saved:
	case <-ctx.Done():
		return
	}
	start := time.Now()
	n, skipped, err := s.restore(ctx, saved)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.Is(err, errSnapshotStale):
		s.log.Info("xml models: the saved models are not used", "path", s.cfg.SnapshotPath, "reason", err)
	case err != nil:
		s.log.Warn("xml models: restoring the saved models stopped; the rest are read from the database", "path", s.cfg.SnapshotPath, "restored", n, "error", err)
	default:
		s.log.Info("xml models restored", "tenants", n, "changed since, read again", skipped,
			"file_read_in", saved.took.Round(time.Millisecond), "took", time.Since(start).Round(time.Millisecond))
	}
}

// errSnapshotStale says why a file's models cannot be used as a whole.
var errSnapshotStale = errors.New("saved models stale")

func (s *Service) restore(ctx context.Context, saved *savedModels) (restored, skipped int, err error) {
	if len(saved.models) == 0 {
		return 0, 0, saved.err
	}
	// The generations before the outbox is read: a change after this is
	// either in what the outbox says or moves its scope past the
	// generation a model is stored under.
	epoch, known := s.gens.all()
	changed, complete, err := s.st.OutboxScopesAfter(ctx, saved.header.Cursor)
	if err != nil {
		return 0, 0, err
	}
	if !complete {
		return 0, 0, fmt.Errorf("%w: the changes since it was saved were pruned from the outbox", errSnapshotStale)
	}
	for _, r := range saved.models {
		if changed[r.key] {
			skipped++
			continue
		}
		e := tenantEntry{epoch: epoch, gen: known[r.key], m: r.m}
		if g := s.gens.current(r.key); g.epoch != epoch || g.tgen != e.gen {
			skipped++ // changed while restoring
			continue
		}
		if !s.models.tenants.putIfOlder(r.key, e, r.weight, false) {
			if _, w := s.models.tenants.stats(); w+r.weight > s.models.tenants.max {
				return restored, skipped, saved.err // the budget is full
			}
			continue // built on demand meanwhile
		}
		restored++
	}
	return restored, skipped, saved.err
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

// waitRestore waits until a restore of saved models that may hold tenant's
// model is done.
func (s *Service) waitRestore(ctx context.Context) error {
	ch := s.restoring.Load()
	if ch == nil {
		return nil
	}
	select {
	case <-*ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// restored releases the fetches waiting for the restore.
func (s *Service) restored() {
	if ch := s.restoring.Swap(nil); ch != nil {
		close(*ch)
	}
}
