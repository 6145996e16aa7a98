package media

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
)

// Job is a bulk CDR import: its source file is read in batches; each
// batch's rows, errors and the job's progress (byte_offset, rows_done,
// counters) commit together, so a job resumed after a crash continues
// after the last committed batch, and the cdrs unique key makes any replay
// of it a no-op.
type Job struct {
	ID          int64      `db:"id" json:"id"`
	TenantID    int64      `db:"tenant_id" json:"-"`
	Tenant      string     `db:"tenant" json:"tenant"`
	Kind        string     `db:"kind" json:"kind"`
	Format      string     `db:"format" json:"format"`
	Source      string     `db:"source" json:"-"`
	SourceBytes int64      `db:"source_bytes" json:"source_bytes"`
	Status      string     `db:"status" json:"status"`
	ByteOffset  int64      `db:"byte_offset" json:"bytes_done"`
	RowsDone    int64      `db:"rows_done" json:"rows_done"`
	Created     int64      `db:"created_rows" json:"created"`
	Duplicates  int64      `db:"duplicate_rows" json:"duplicates"`
	Failed      int64      `db:"failed_rows" json:"failed"`
	Conflicts   int64      `db:"conflict_rows" json:"conflicts"` // refused (in Failed, code conflict): external_id imported before with other content
	Error       string     `db:"error" json:"error"`
	CreatedAt   string     `db:"created_at" json:"created_at"`
	UpdatedAt   string     `db:"updated_at" json:"updated_at"`
	FinishedAt  *string    `db:"finished_at" json:"finished_at"`
	Errors      []RowError `db:"-" json:"errors"`
}

// Job states.
const (
	JobRunning = "running"
	JobDone    = "done"
	JobFailed  = "failed"
)

// Formats of bulk files.
const (
	FormatCSV   = "csv"
	FormatJSONL = "jsonl"
)

// Limits of the job runner.
const (
	// batchRows is the rows of one batch: one INSERT (16 placeholders a
	// row, under SQLite's and MySQL's limits) and one transaction.
	batchRows = 2000
	// maxRowErrors is how many refused rows a job keeps with their reason
	// (all are counted in failed).
	maxRowErrors = 1000
	// jobErrorsShown is how many of them a job read lists.
	jobErrorsShown = 100
	leaseFor       = time.Minute
)

// BulkBatchRows is how many records a bulk import commits at a time.
const BulkBatchRows = batchRows

// ErrLeased means another runner holds the job.
var ErrLeased = errors.New("the import job is being run elsewhere")

const jobColumns = "id, tenant_id, tenant, kind, format, source, source_bytes, status, byte_offset, rows_done, created_rows, duplicate_rows, failed_rows, conflict_rows, error, created_at, updated_at, finished_at"

// CreateCDRJob records a job over a file already in place (spooled upload
// or, from the command line, the operator's file). With an owner (the
// runner about to run it) the job starts leased by that owner: created
// unleased, any replica's resume round could take it before its creator
// did, and a replica that took it while shutting down kept it for a
// lease's length (seen in CI: a test's job stayed at row 0 for 30 s).
// Without one, the next resume round of any replica runs it.
func (s *Service) CreateCDRJob(ctx context.Context, o models.Owner, format, source, owner string) (Job, error) {
	if format != FormatCSV && format != FormatJSONL {
		return Job{}, fmt.Errorf("import format %q: must be csv or jsonl", format)
	}
	st, err := os.Stat(source)
	if err != nil {
		return Job{}, fmt.Errorf("import source: %w", err)
	}
	now := s.now()
	stamp, leaseUntil := models.FormatTime(now), ""
	if owner != "" {
		leaseUntil = models.FormatTime(now.Add(leaseFor))
	}
	res, err := s.Store.Querier().ExecContext(ctx, `INSERT INTO import_jobs (tenant_id, tenant, kind, format, source, source_bytes, status, created_at, updated_at, lease_owner, lease_until)
		VALUES (?, ?, 'cdrs', ?, ?, ?, ?, ?, ?, ?, ?)`, o.TenantID, o.Tenant, format, source, st.Size(), JobRunning, stamp, stamp, owner, leaseUntil)
	if err != nil {
		return Job{}, fmt.Errorf("create import job: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return Job{}, fmt.Errorf("create import job: %w", err)
	}
	return s.JobByID(ctx, o, id)
}

// UnfinishedJob finds a tenant's running job over source, for the command
// line to resume instead of starting again.
func (s *Service) UnfinishedJob(ctx context.Context, o models.Owner, source string) (Job, error) {
	return getOne[Job](ctx, s, "import job", "SELECT "+jobColumns+" FROM import_jobs WHERE tenant_id = ? AND source = ? AND status = ? ORDER BY id DESC LIMIT 1", o.TenantID, source, JobRunning)
}

// JobByID reads a tenant's job with its first refused rows.
func (s *Service) JobByID(ctx context.Context, o models.Owner, id int64) (Job, error) {
	j, err := getOne[Job](ctx, s, "import job", "SELECT "+jobColumns+" FROM import_jobs WHERE tenant_id = ? AND id = ?", o.TenantID, id)
	if err != nil {
		return Job{}, err
	}
	j.Errors = []RowError{}
	err = s.Store.Querier().SelectContext(ctx, &j.Errors, "SELECT row_no, external_id, code, error FROM import_errors WHERE job_id = ? ORDER BY row_no LIMIT ?", id, jobErrorsShown)
	if err != nil {
		return Job{}, fmt.Errorf("read import errors: %w", err)
	}
	return j, nil
}

// claim takes or renews the job's lease for owner; false when another
// runner holds it or the job is finished.
func (s *Service) claim(ctx context.Context, q models.Querier, id int64, owner string) (bool, error) {
	now := s.now()
	// claims always changes, so MySQL counts the row as affected even when
	// the lease's time is unchanged.
	res, err := q.ExecContext(ctx, `UPDATE import_jobs SET lease_owner = ?, lease_until = ?, updated_at = ?, claims = claims + 1
		WHERE id = ? AND status = ? AND (lease_owner = ? OR lease_until < ?)`,
		owner, models.FormatTime(now.Add(leaseFor)), models.FormatTime(now), id, JobRunning, owner, models.FormatTime(now))
	if err != nil {
		return false, fmt.Errorf("claim import job %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RunJob runs a job to its end from where it stands, as owner (a replica
// or command-line run id). progress, when set, sees the job after every
// batch. A cancelled ctx stops between batches, nothing half-written.
func (s *Service) RunJob(ctx context.Context, id int64, owner string, progress func(Job)) error {
	ok, err := s.claim(ctx, s.Store.Querier(), id, owner)
	if err != nil {
		return err
	}
	if !ok {
		return ErrLeased
	}
	var j Job
	if err := s.Store.Querier().GetContext(ctx, &j, "SELECT "+jobColumns+" FROM import_jobs WHERE id = ?", id); err != nil {
		return fmt.Errorf("read import job %d: %w", id, err)
	}
	err = s.runJob(ctx, &j, owner, progress)
	var se sourceError
	switch {
	case err == nil || ctx.Err() != nil:
	case errors.As(err, &se):
		// The file itself is broken (not a stopped run): the job fails,
		// saying why.
		s.finish(context.WithoutCancel(ctx), &j, owner, JobFailed, se.Error())
	case !errors.Is(err, ErrLeased):
		// The database failed (a deadlock beyond the retries, an outage):
		// nothing of the batch was committed; the job stays running and is
		// resumed from its last batch, by the next resume round.
		if rerr := s.ReleaseJob(context.WithoutCancel(ctx), j.ID, owner); rerr != nil {
			s.log().Warn("media: releasing an import job failed", "job", j.ID, "error", rerr)
		}
	}
	return err
}

// sourceError is a failure of the job's file (unreadable, malformed as a
// whole): the job fails with its message. Other errors leave it to resume.
type sourceError struct{ err error }

func (e sourceError) Error() string { return e.err.Error() }
func (e sourceError) Unwrap() error { return e.err }

// ReleaseJob gives up owner's lease on an unfinished job, so that the next
// run (the same command again, or any replica) continues at once instead
// of after the lease lapses. For a run that stopped on purpose (^C): a run
// that dies keeps its lease for a minute.
func (s *Service) ReleaseJob(ctx context.Context, id int64, owner string) error {
	_, err := s.Store.Querier().ExecContext(ctx, `UPDATE import_jobs SET lease_owner = '', lease_until = '', updated_at = ? WHERE id = ? AND lease_owner = ? AND status = ?`,
		models.FormatTime(s.now()), id, owner, JobRunning)
	if err != nil {
		return fmt.Errorf("release import job %d: %w", id, err)
	}
	return nil
}

// batch is one batch of a bulk file as the reader parsed it.
type batch struct {
	rows    []cdrRow
	rowErrs []RowError
	n       int64 // records read (rows and refused ones)
	offset  int64 // the byte offset after the batch
	eof     bool
}

func (s *Service) runJob(ctx context.Context, j *Job, owner string, progress func(Job)) error {
	f, err := os.Open(j.Source)
	if err != nil {
		return sourceError{fmt.Errorf("open import source: %w", err)}
	}
	defer f.Close()
	next, err := newRowReader(f, j.Format, j.ByteOffset)
	if err != nil {
		return sourceError{err}
	}
	// The reader parses the next batch while this one is written: at most
	// three batches exist at a time (being read, waiting, being written).
	rctx, stop := context.WithCancel(ctx)
	batches := make(chan batch, 1)
	readErr := make(chan error, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(batches)
		readErr <- s.readBatches(rctx, next, j.Tenant, j.RowsDone, batches)
	}()
	// The reader never outlives the run (it reads the file closed above and
	// the service's clock): stop it, drain what it still sends, wait.
	defer func() {
		stop()
		for range batches {
		}
		<-readDone
	}()
	full, err := s.Store.Querier().PrepareContext(ctx, cdrInsertSQL(s.Store.Dialect(), batchRows))
	if err != nil {
		return fmt.Errorf("prepare cdr insert: %w", err)
	}
	defer full.Close()
	var args []any
	for b := range batches {
		if b.n > 0 {
			stmt := full
			if len(b.rows) != batchRows {
				stmt = nil
			}
			if args, err = s.commitBatch(ctx, j, owner, b, args, stmt); err != nil {
				return err
			}
			if progress != nil {
				progress(*j)
			}
		}
		if b.eof {
			s.finish(ctx, j, owner, JobDone, "")
			if progress != nil {
				progress(*j)
			}
			return nil
		}
	}
	if err := <-readErr; err != nil {
		return err
	}
	return ctx.Err()
}

// readBatches parses the file into batches of batchRows records until the
// end (a last batch with eof set), an error, or ctx's end.
func (s *Service) readBatches(ctx context.Context, next rowReader, tenant string, rowsDone int64, out chan<- batch) error {
	for {
		b := batch{rows: make([]cdrRow, 0, batchRows)}
		now := s.now()
		for b.n < batchRows {
			rec, off, perr, err := next()
			if errors.Is(err, io.EOF) {
				b.eof = true
				break
			}
			if err != nil {
				return sourceError{err}
			}
			b.n++
			b.offset = off
			rowNo := rowsDone + b.n
			if perr != nil {
				b.rowErrs = append(b.rowErrs, RowError{Row: rowNo, Code: "invalid_row", Error: perr.Error()})
				continue
			}
			row, rerr := checkCDR(tenant, rec, now)
			if rerr != nil {
				rerr.Row = rowNo
				b.rowErrs = append(b.rowErrs, *rerr)
				continue
			}
			row.row = rowNo
			b.rows = append(b.rows, row)
		}
		rowsDone += b.n
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		if b.eof {
			return nil
		}
	}
}

// commitBatch writes one batch with the job's progress in one transaction,
// holding the lease (a runner that lost it writes nothing).
func (s *Service) commitBatch(ctx context.Context, j *Job, owner string, b batch, args []any, full *models.Stmt) ([]any, error) {
	rows, n, offset := b.rows, b.n, b.offset
	var created, duplicates int64
	var rowErrs, conflicts []RowError
	err := s.Store.InTx(ctx, func(tx models.Querier) error {
		ok, err := s.claim(ctx, tx, j.ID, owner)
		if err != nil {
			return err
		}
		if !ok {
			return ErrLeased
		}
		if created, duplicates, conflicts, args, err = storeCDRs(ctx, tx, s.Store.Dialect(), rows, args, full); err != nil {
			return err
		}
		rowErrs = append(b.rowErrs[:len(b.rowErrs):len(b.rowErrs)], conflicts...)
		for i, e := range rowErrs {
			if j.Failed+int64(i) >= maxRowErrors {
				break
			}
			if _, err := tx.ExecContext(ctx, s.Store.Dialect().InsertIgnore()+" INTO import_errors (job_id, row_no, external_id, code, error) VALUES (?, ?, ?, ?, ?)",
				j.ID, e.Row, truncate(e.ExternalID, 128), e.Code, truncate(e.Error, 512)); err != nil {
				return fmt.Errorf("record import error: %w", err)
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE import_jobs SET byte_offset = ?, rows_done = rows_done + ?, created_rows = created_rows + ?,
			duplicate_rows = duplicate_rows + ?, failed_rows = failed_rows + ?, conflict_rows = conflict_rows + ?, updated_at = ? WHERE id = ?`,
			offset, n, created, duplicates, len(rowErrs), len(conflicts), models.FormatTime(s.now()), j.ID)
		if err != nil {
			return fmt.Errorf("record import progress: %w", err)
		}
		return nil
	})
	if err != nil {
		return args, err
	}
	j.ByteOffset, j.RowsDone = offset, j.RowsDone+n
	j.Created += created
	j.Duplicates += duplicates
	j.Failed += int64(len(rowErrs))
	j.Conflicts += int64(len(conflicts))
	return args, nil
}

// finish ends a job (done or failed) and releases its lease. A write that
// fails (SQLite busy under concurrent imports, a deadlock) is tried again a
// few times; if the job still cannot be ended, its lease is given up so the
// next resume round ends it (it resumes after its last batch, at the end of
// the file) instead of the job staying "running" until the lease lapses.
func (s *Service) finish(ctx context.Context, j *Job, owner, status, msg string) {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
			}
		}
		if err = s.finishOnce(ctx, j, owner, status, msg); err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		s.log().Error("media: finishing an import job failed", "job", j.ID, "error", err)
		if rerr := s.ReleaseJob(context.WithoutCancel(ctx), j.ID, owner); rerr != nil {
			s.log().Warn("media: releasing an import job failed", "job", j.ID, "error", rerr)
		}
	}
}

func (s *Service) finishOnce(ctx context.Context, j *Job, owner, status, msg string) error {
	stamp := models.FormatTime(s.now())
	// The system event (import.completed or import.failed) commits with
	// the job's end, once: only the runner that still holds the lease ends it.
	err := s.Store.WithEvents(ctx, func(tx models.Querier) ([]changes.Change, error) {
		res, err := tx.ExecContext(ctx, `UPDATE import_jobs SET status = ?, error = ?, finished_at = ?, updated_at = ?, lease_owner = '', lease_until = ''
			WHERE id = ? AND lease_owner = ?`, status, truncate(msg, 512), stamp, stamp, j.ID, owner)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return nil, err
		}
		typ := "import.completed"
		if status == JobFailed {
			typ = "import.failed"
		}
		ev, err := models.NewEvent(typ, "", strconv.FormatInt(j.ID, 10), map[string]any{
			"job_id": j.ID, "tenant": j.Tenant, "kind": j.Kind, "status": status, "rows_done": j.RowsDone,
			"created": j.Created, "duplicates": j.Duplicates, "failed": j.Failed, "conflicts": j.Conflicts, "error": truncate(msg, 512),
		})
		return []changes.Change{ev}, err
	})
	if err != nil {
		return err
	}
	j.Status, j.Error, j.FinishedAt = status, msg, &stamp
	s.dropSpooled(j.Source)
	return nil
}

// ResumeJobs runs every unfinished job whose lease has lapsed (its runner
// died) as owner, one at a time, until ctx ends or none is left.
func (s *Service) ResumeJobs(ctx context.Context, owner string) {
	for ctx.Err() == nil {
		var ids []int64
		err := s.Store.Querier().SelectContext(ctx, &ids, "SELECT id FROM import_jobs WHERE status = ? AND lease_until < ? ORDER BY id LIMIT 10",
			JobRunning, models.FormatTime(s.now()))
		if err != nil {
			s.log().Error("media: listing import jobs failed", "error", err)
			return
		}
		if len(ids) == 0 {
			return
		}
		for _, id := range ids {
			if err := s.RunJob(ctx, id, owner, nil); err != nil && !errors.Is(err, ErrLeased) && ctx.Err() == nil {
				s.log().Error("media: import job failed", "job", id, "error", err)
			}
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// rowReader yields records from a bulk file with the byte offset just
// after each; a record that does not parse comes back as perr (the run
// continues), a broken file as err.
type rowReader func() (rec CDRRecord, offset int64, perr error, err error)

// newRowReader reads JSON Lines, or CSV with a header row naming the
// fields, starting at offset (0, or a batch end recorded earlier).
func newRowReader(f *os.File, format string, offset int64) (rowReader, error) {
	if format == FormatJSONL {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil, fmt.Errorf("seek import source: %w", err)
		}
		br := bufio.NewReaderSize(f, 64<<10)
		pos := offset
		return func() (CDRRecord, int64, error, error) {
			for {
				line, err := br.ReadBytes('\n')
				pos += int64(len(line))
				if len(line) == 0 && err != nil {
					return CDRRecord{}, pos, nil, err
				}
				if err != nil && !errors.Is(err, io.EOF) {
					return CDRRecord{}, pos, nil, fmt.Errorf("read import source: %w", err)
				}
				if len(strings.TrimSpace(string(line))) == 0 {
					continue
				}
				var rec CDRRecord
				dec := json.NewDecoder(strings.NewReader(string(line)))
				dec.DisallowUnknownFields()
				if derr := dec.Decode(&rec); derr != nil {
					return CDRRecord{}, pos, fmt.Errorf("not a JSON object with the CDR fields: %v", derr), nil
				}
				return rec, pos, nil, nil
			}
		}, nil
	}
	header, headerEnd, err := readCSVHeader(f)
	if err != nil {
		return nil, err
	}
	start := max(offset, headerEnd)
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seek import source: %w", err)
	}
	cr := csv.NewReader(bufio.NewReaderSize(f, 64<<10))
	cr.FieldsPerRecord = len(header)
	cr.ReuseRecord = true
	return func() (CDRRecord, int64, error, error) {
		fields, err := cr.Read()
		pos := start + cr.InputOffset()
		if errors.Is(err, io.EOF) {
			return CDRRecord{}, pos, nil, io.EOF
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return CDRRecord{}, pos, fmt.Errorf("malformed CSV line: %v", pe.Err), nil
		}
		if err != nil {
			return CDRRecord{}, pos, nil, fmt.Errorf("read import source: %w", err)
		}
		rec, perr := csvRecord(header, fields)
		return rec, pos, perr, nil
	}, nil
}

// readCSVHeader reads the header row and where the data starts.
func readCSVHeader(f *os.File) ([]string, int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("seek import source: %w", err)
	}
	cr := csv.NewReader(bufio.NewReader(f))
	header, err := cr.Read()
	if err != nil {
		return nil, 0, fmt.Errorf("CSV import: the first line must be a header naming the fields: %w", err)
	}
	known := map[string]bool{}
	for _, name := range csvFields {
		known[name] = true
	}
	for i, h := range header {
		header[i] = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if !known[header[i]] {
			return nil, 0, fmt.Errorf("CSV import: unknown column %q", header[i])
		}
	}
	return header, cr.InputOffset(), nil
}

var csvFields = []string{"external_id", "start", "answer", "end", "duration", "billsec", "src", "dst", "caller_id_name",
	"direction", "disposition", "hangup_cause", "extension", "did", "queue", "accountcode", "recording_external_id"}

// csvRecord maps a CSV row onto the record by the header's names.
func csvRecord(header, fields []string) (CDRRecord, error) {
	var r CDRRecord
	for i, name := range header {
		v := fields[i]
		switch name {
		case "duration", "billsec":
			if v == "" {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return r, fmt.Errorf("%s must be whole seconds", name)
			}
			if name == "duration" {
				r.Duration = &n
			} else {
				r.Billsec = &n
			}
		default:
			*r.textField(name) = v
		}
	}
	return r, nil
}

// textField is the record's string field of a CSV column.
func (r *CDRRecord) textField(name string) *string {
	switch name {
	case "external_id":
		return &r.ExternalID
	case "start":
		return &r.Start
	case "answer":
		return &r.Answer
	case "end":
		return &r.End
	case "src":
		return &r.Src
	case "dst":
		return &r.Dst
	case "caller_id_name":
		return &r.CallerIDName
	case "direction":
		return &r.Direction
	case "disposition":
		return &r.Disposition
	case "hangup_cause":
		return &r.HangupCause
	case "extension":
		return &r.Extension
	case "did":
		return &r.DID
	case "queue":
		return &r.Queue
	case "accountcode":
		return &r.AccountCode
	}
	return &r.RecordingExternalID
}
