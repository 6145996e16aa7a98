package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/models"
)

type importCmd struct {
	CDRs importCDRsCmd `cmd:"" name:"cdrs" help:"Import CDRs from a CSV (header row) or JSON Lines file as a resumable job; run it again after an interruption to continue."`
}

type importCDRsCmd struct {
	File   string `arg:"" type:"existingfile" help:"CSV or JSON Lines file of CDRs (fields as in POST /api/tenants/<tenant>/imports/cdrs)."`
	Tenant string `required:"" help:"Tenant the CDRs belong to."`
	Format string `enum:"auto,csv,jsonl" default:"auto" help:"File format; auto: by extension (.csv, else JSON Lines)."`
}

func (c importCDRsCmd) Run(rc *runCtx) error {
	return withStore(rc.ctx, rc.env, func(cfg Config, st *models.Store) error {
		o, err := st.Tenant(rc.ctx, c.Tenant)
		if errors.Is(err, models.ErrNotFound) {
			return fmt.Errorf("%w: --tenant %s: no such tenant", ErrUsage, c.Tenant)
		} else if err != nil {
			return err
		}
		src, err := filepath.Abs(c.File)
		if err != nil {
			return fmt.Errorf("import file: %w", err)
		}
		format := c.Format
		if format == "auto" {
			format = media.FormatJSONL
			if strings.EqualFold(filepath.Ext(src), ".csv") {
				format = media.FormatCSV
			}
		}
		svc := &media.Service{Store: st, Lib: &media.Library{Root: cfg.Media.Dir}}
		host, _ := os.Hostname()
		owner := fmt.Sprintf("cli:%s:%d", host, os.Getpid())
		job, err := svc.UnfinishedJob(rc.ctx, o, src)
		switch {
		case err == nil:
			fmt.Fprintf(rc.env.Stderr, "resuming import job %d after row %d\n", job.ID, job.RowsDone)
		case errors.Is(err, models.ErrNotFound):
			if job, err = svc.CreateCDRJob(rc.ctx, o, format, src, owner); err != nil {
				return err
			}
		default:
			return err
		}
		bar := progressbar.NewOptions64(job.SourceBytes,
			progressbar.OptionSetWriter(rc.env.Stderr),
			progressbar.OptionSetDescription(fmt.Sprintf("job %d", job.ID)),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(rc.env.Stderr) }),
		)
		_ = bar.Set64(job.ByteOffset)
		var rowsDone int64
		err = svc.RunJob(rc.ctx, job.ID, owner, func(j media.Job) { rowsDone = j.RowsDone; _ = bar.Set64(j.ByteOffset) })
		if err != nil && rc.ctx.Err() != nil {
			// Interrupted (^C, SIGTERM): what is committed stays; free the
			// job so the same command continues it right away.
			if rerr := svc.ReleaseJob(context.WithoutCancel(rc.ctx), job.ID, owner); rerr != nil {
				return rerr
			}
			fmt.Fprintln(rc.env.Stderr)
			return fmt.Errorf("import job %d interrupted after row %d; run the same command again to continue", job.ID, max(rowsDone, job.RowsDone))
		}
		if errors.Is(err, media.ErrLeased) {
			return fmt.Errorf("import job %d is being run by another process (a run that was killed holds it for up to a minute; try again then)", job.ID)
		}
		if err != nil {
			return fmt.Errorf("import job %d: %w", job.ID, err)
		}
		job, err = svc.JobByID(rc.ctx, o, job.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(rc.env.Stdout, "job %d %s: %d rows, %d created, %d duplicates, %d failed (%d conflicts)\n", job.ID, job.Status, job.RowsDone, job.Created, job.Duplicates, job.Failed, job.Conflicts)
		for _, e := range job.Errors {
			fmt.Fprintf(rc.env.Stderr, "row %d (%s): %s\n", e.Row, e.ExternalID, e.Error)
		}
		return nil
	})
}
