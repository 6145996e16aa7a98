package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/models"
)

// benchCDRImport measures a bulk CDR import job (JSON Lines, batched
// multi-row inserts) end to end: reading, validating, inserting and
// recording progress, with the heap before and after.
func benchCDRImport(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("cdrimport", flag.ContinueOnError)
	rows := fl.Int("rows", 100000, "CDRs in the file")
	if err := fl.Parse(args); err != nil {
		return err
	}
	b, err := openBackend(ctx)
	if err != nil {
		return err
	}
	defer b.close()
	tenant := fmt.Sprintf("bcdr%06d", rand.IntN(1000000))
	if _, err := b.st.Create(ctx, b.st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant}); err != nil {
		return err
	}
	owner, err := b.st.Tenant(ctx, tenant)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sbbench-cdr")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "cdrs.jsonl")
	if err := writeBenchCDRs(src, *rows); err != nil {
		return err
	}
	svc := &media.Service{Store: b.st, Lib: &media.Library{Root: dir}}
	job, err := svc.CreateCDRJob(ctx, owner, media.FormatJSONL, src, "sbbench")
	if err != nil {
		return err
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	if err := svc.RunJob(ctx, job.ID, "sbbench", nil); err != nil {
		return err
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	job, err = svc.JobByID(ctx, owner, job.ID)
	if err != nil {
		return err
	}
	fmt.Printf("cdr import: %d rows (JSON Lines, %d per batch) on %s in %.2fs: %.0f rows/s; created %d, failed %d\n",
		job.RowsDone, media.BulkBatchRows, b.name, elapsed.Seconds(), float64(job.RowsDone)/elapsed.Seconds(), job.Created, job.Failed)
	fmt.Printf("  heap in use before %d MiB, after %d MiB; allocated %d MiB in total\n", before.HeapInuse>>20, after.HeapInuse>>20, (after.TotalAlloc-before.TotalAlloc)>>20)
	return nil
}

func writeBenchCDRs(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	base := time.Now().Add(-365 * 24 * time.Hour).UTC()
	for i := range n {
		fmt.Fprintf(w, `{"external_id":"bench-%d","start":"%s","duration":%d,"billsec":%d,"src":"1001","dst":"+2721555%04d","direction":"outbound","disposition":"answered","caller_id_name":"Bench"}`+"\n",
			i, base.Add(time.Duration(i)*time.Second).Format(time.RFC3339), 60+i%300, 30+i%30, i%10000)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
