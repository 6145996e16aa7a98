package media

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/worker"
)

// runner runs import jobs in the background of a server.
type runner struct {
	ctx   context.Context
	owner string
	wg    sync.WaitGroup
}

// Start runs import jobs until ctx ends: uploaded ones at once (Launch),
// sweeps orphaned media files (SweepOrphans) at once and every OrphanAge,
// and, every interval, those whose runner died (lease lapsed: a crash or a
// restart) from where their last batch left them. stop waits for runs to
// end between batches.
func (s *Service) Start(ctx context.Context, owner string, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	s.run = &runner{ctx: ctx, owner: owner}
	s.run.wg.Add(1)
	var swept time.Time
	loop := worker.New(worker.Options{Name: "media: import jobs", Poll: interval, Logger: s.log()})
	go func() {
		defer s.run.wg.Done()
		loop.Run(ctx, func(ctx context.Context) (bool, error) {
			s.ResumeJobs(ctx, owner)
			if s.Lib != nil && time.Since(swept) >= OrphanAge {
				swept = time.Now()
				if n, err := s.SweepOrphans(ctx); err != nil {
					s.log().Warn("media: orphan sweep failed", "error", err)
				} else if n > 0 {
					s.log().Info("media: removed files no row names", "files", n)
				}
			}
			return false, nil
		})
	}()
	return func() { cancel(); s.run.wg.Wait() }
}

// Launch runs a new job in the background (Start must have run).
func (s *Service) Launch(id int64) {
	if s.run == nil {
		return // picked up by whichever replica resumes jobs
	}
	s.run.wg.Add(1)
	go func() {
		defer s.run.wg.Done()
		if err := s.RunJob(s.run.ctx, id, s.run.owner, nil); err != nil && !errors.Is(err, ErrLeased) && s.run.ctx.Err() == nil {
			s.log().Error("media: import job failed", "job", id, "error", err)
		}
	}()
}

// spoolDir holds uploaded bulk files until their job ends.
const spoolDir = ".imports"

// SpoolCDRs stores an uploaded bulk file in the library (complete or not at
// all) and records its job.
func (s *Service) SpoolCDRs(ctx context.Context, o models.Owner, format string, body []byte) (Job, error) {
	// The spooled upload counts against the tenant's storage until the job ends.
	if err := s.admitter(o.Tenant)(ctx, int64(len(body))); err != nil {
		return Job{}, err
	}
	dir := filepath.Join(s.Lib.Root, spoolDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return Job{}, fmt.Errorf("import spool: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".upload-*")
	if err != nil {
		return Job{}, fmt.Errorf("import spool: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(body); err != nil {
		tmp.Close()
		return Job{}, fmt.Errorf("import spool: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return Job{}, fmt.Errorf("import spool: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return Job{}, fmt.Errorf("import spool: %w", err)
	}
	final := filepath.Join(dir, randomName()+"."+format)
	if err := os.Rename(tmp.Name(), final); err != nil {
		return Job{}, fmt.Errorf("import spool: %w", err)
	}
	owner := "" // no runner here: the next resume round of any replica runs it
	if s.run != nil {
		owner = s.run.owner // Launch runs it next
	}
	j, err := s.CreateCDRJob(ctx, o, format, final, owner)
	if err != nil {
		os.Remove(final)
	}
	return j, err
}

// dropSpooled removes a finished job's uploaded file (never an operator's
// own file given on the command line).
func (s *Service) dropSpooled(source string) {
	if s.Lib == nil || !strings.HasPrefix(source, filepath.Join(s.Lib.Root, spoolDir)+string(filepath.Separator)) {
		return
	}
	if err := os.Remove(source); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log().Warn("media: removing an import upload failed", "path", source, "error", err)
	}
}
