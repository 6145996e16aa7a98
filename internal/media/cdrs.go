package media

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/models"
)

// CDRRecord is one imported call detail record (resources.md §5.4). Times
// are ISO 8601 with a zone; duration and billsec are seconds.
type CDRRecord struct {
	ExternalID          string `json:"external_id"`
	Start               string `json:"start"`
	Answer              string `json:"answer,omitempty"`
	End                 string `json:"end,omitempty"`
	Duration            *int64 `json:"duration"`
	Billsec             *int64 `json:"billsec,omitempty"`
	Src                 string `json:"src"`
	Dst                 string `json:"dst"`
	CallerIDName        string `json:"caller_id_name,omitempty"`
	Direction           string `json:"direction"`
	Disposition         string `json:"disposition"`
	HangupCause         string `json:"hangup_cause,omitempty"`
	Extension           string `json:"extension,omitempty"`
	DID                 string `json:"did,omitempty"`
	Queue               string `json:"queue,omitempty"`
	AccountCode         string `json:"accountcode,omitempty"`
	RecordingExternalID string `json:"recording_external_id,omitempty"`
}

// ImportNode is the node column of imported CDRs: live CDRs carry their
// FreeSWITCH node's name, imports this one (reports show imported: true).
const ImportNode = models.ImportedNode

// cdrRow is a validated record as the cdrs table takes it.
type cdrRow struct {
	row                                        int64 // where it came from: index (records) or line of data (file)
	tenant, externalID, key                    string
	direction, callerName, src, dst, extension string
	started, ended                             string
	answered                                   *string
	duration, billsec                          int64
	hangupCause                                string
	explicitCause                              bool // hangup_cause was given (else it comes from disposition)
}

var (
	patCause         = regexp.MustCompile(`^[A-Z_]{1,64}$`)
	dispositionCause = map[string]string{"answered": "NORMAL_CLEARING", "no_answer": "NO_ANSWER", "busy": "USER_BUSY", "failed": "CALL_REJECTED"}
)

// RowError is why one record of an import was refused.
type RowError struct {
	Row        int64  `json:"row" db:"row_no"`
	ExternalID string `json:"external_id" db:"external_id"`
	Code       string `json:"code" db:"code"`
	Error      string `json:"error" db:"error"`
}

// checkCDR validates one record into a row, or says why not.
func checkCDR(tenant string, r CDRRecord, now time.Time) (cdrRow, *RowError) {
	bad := func(field, msg string) (cdrRow, *RowError) {
		return cdrRow{}, &RowError{ExternalID: r.ExternalID, Code: "invalid_" + field, Error: field + " " + msg}
	}
	if !patExternalID.MatchString(r.ExternalID) {
		return bad("external_id", "is required: 1-128 printable characters without spaces")
	}
	start, ve := parseWhen("start", r.Start, now)
	if r.Start == "" || ve != nil {
		return bad("start", "is required: ISO 8601 with Z or an offset, not in the future")
	}
	if r.Duration == nil || *r.Duration < 0 || *r.Duration > 10*86400 {
		return bad("duration", "is required: seconds from 0 to 864000")
	}
	end := start.Add(time.Duration(*r.Duration) * time.Second)
	if r.End != "" {
		t, ve := parseWhen("end", r.End, now.Add(time.Duration(*r.Duration)*time.Second))
		if ve != nil || t.Before(start) {
			return bad("end", "must be an ISO 8601 time not before start")
		}
		end = t
	}
	var answered *string
	if r.Answer != "" {
		t, ve := parseWhen("answer", r.Answer, now)
		if ve != nil || t.Before(start) || t.After(end) {
			return bad("answer", "must be an ISO 8601 time from start to end")
		}
		a := models.FormatTime(t)
		answered = &a
	}
	var billsec int64
	if r.Billsec != nil {
		if *r.Billsec < 0 || *r.Billsec > *r.Duration {
			return bad("billsec", "must be from 0 to duration")
		}
		billsec = *r.Billsec
	}
	for field, v := range map[string]string{"src": r.Src, "dst": r.Dst} {
		if !patParty.MatchString(v) {
			return bad(field, "is required: a dialable number or extension name")
		}
	}
	if !slices.Contains([]string{"inbound", "outbound", "internal"}, r.Direction) {
		return bad("direction", "is required: inbound, outbound or internal")
	}
	cause, ok := dispositionCause[r.Disposition]
	if !ok {
		return bad("disposition", "is required: answered, no_answer, busy or failed")
	}
	if r.HangupCause != "" {
		if !patCause.MatchString(r.HangupCause) {
			return bad("hangup_cause", "must be a Q.850 cause name such as NORMAL_CLEARING")
		}
		cause = r.HangupCause
	}
	if len(r.CallerIDName) > 128 || (r.Extension != "" && !patParty.MatchString(r.Extension)) {
		return bad("caller_id_name", "or extension is too long or malformed")
	}
	return cdrRow{
		tenant: tenant, externalID: r.ExternalID, key: importKey(tenant, r.ExternalID),
		direction: r.Direction, callerName: r.CallerIDName, src: r.Src, dst: r.Dst, extension: r.Extension,
		started: models.FormatTime(start), ended: models.FormatTime(end), answered: answered,
		duration: *r.Duration, billsec: billsec, hangupCause: cause, explicitCause: r.HangupCause != "",
	}, nil
}

// importKey is the uuid column of an imported CDR: a digest of tenant and
// external_id, so (node "import", uuid) is the idempotent row key the cdrs
// table's unique index already enforces.
func importKey(tenant, externalID string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(tenant) + "\x00" + externalID))
	return hex.EncodeToString(sum[:])
}

const cdrInsertColumns = "(tenant, channel_id, uuid, node, direction, caller_id_name, caller_id_number, destination, extension, started_at, answered_at, ended_at, duration_seconds, billsec, hangup_cause, recording_path, created_at)"

// cdrInsertSQL is the multi-row INSERT of n rows that skips keys already
// there.
func cdrInsertSQL(d models.Dialect, n int) string {
	var q strings.Builder
	q.WriteString(d.InsertIgnore() + " INTO cdrs " + cdrInsertColumns + " VALUES ")
	for i := range n {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?)")
	}
	return q.String()
}

// insertCDRs writes rows with one multi-row INSERT that skips keys already
// there; it answers how many were new. full, when set, is that statement
// prepared for len(rows) rows (a bulk job's full batches reuse it instead
// of preparing 30,000 placeholders per batch).
func insertCDRs(ctx context.Context, tx models.Querier, d models.Dialect, rows []cdrRow, args []any, full *models.Stmt) (int64, []any, error) {
	if len(rows) == 0 {
		return 0, args, nil
	}
	args = args[:0]
	stamp := models.FormatTime(time.Now())
	for _, r := range rows {
		args = append(args, r.tenant, r.externalID, r.key, ImportNode, r.direction, r.callerName, r.src, r.dst, r.extension,
			r.started, r.answered, r.ended, r.duration, r.billsec, r.hangupCause, stamp)
	}
	var res sql.Result
	var err error
	if full != nil {
		res, err = tx.Stmt(ctx, full).ExecContext(ctx, args...)
	} else {
		res, err = tx.ExecContext(ctx, cdrInsertSQL(d, len(rows)), args...)
	}
	if err != nil {
		return 0, args, fmt.Errorf("insert imported cdrs: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, args, fmt.Errorf("insert imported cdrs: %w", err)
	}
	return n, args, nil
}

// storedCDR is what an imported CDR's row holds, to compare a repeat with.
type storedCDR struct {
	Key         string  `db:"uuid"`
	Direction   string  `db:"direction"`
	CallerName  string  `db:"caller_id_name"`
	Src         string  `db:"caller_id_number"`
	Dst         string  `db:"destination"`
	Extension   string  `db:"extension"`
	Started     string  `db:"started_at"`
	Answered    *string `db:"answered_at"`
	Ended       string  `db:"ended_at"`
	Duration    int64   `db:"duration_seconds"`
	Billsec     int64   `db:"billsec"`
	HangupCause string  `db:"hangup_cause"`
}

// differences names the record fields in which r differs from what is
// stored under its key (the fields the cdrs table keeps: did, queue,
// accountcode and recording_external_id are not stored, so not compared).
func (old storedCDR) differences(r cdrRow) fieldDiff {
	var d fieldDiff
	d.add("start", old.Started != r.started)
	d.add("answer", (old.Answered == nil) != (r.answered == nil) || (old.Answered != nil && *old.Answered != *r.answered))
	d.add("end", old.Ended != r.ended)
	d.add("duration", old.Duration != r.duration)
	d.add("billsec", old.Billsec != r.billsec)
	d.add("src", old.Src != r.src)
	d.add("dst", old.Dst != r.dst)
	d.add("caller_id_name", old.CallerName != r.callerName)
	d.add("direction", old.Direction != r.direction)
	if r.explicitCause {
		d.add("hangup_cause", old.HangupCause != r.hangupCause)
	} else {
		d.add("disposition", old.HangupCause != r.hangupCause)
	}
	d.add("extension", old.Extension != r.extension)
	return d
}

// storeCDRs inserts rows (see insertCDRs) and sorts those not inserted
// into duplicates (the stored row has the same content) and conflicts
// (the same external_id with other content: a refused row with code
// conflict naming the fields that differ). Rows sharing a key within rows
// are compared with whichever of them was stored.
func storeCDRs(ctx context.Context, tx models.Querier, d models.Dialect, rows []cdrRow, args []any, full *models.Stmt) (created, duplicates int64, conflicts []RowError, _ []any, err error) {
	created, args, err = insertCDRs(ctx, tx, d, rows, args, full)
	if err != nil || created == int64(len(rows)) {
		return created, 0, nil, args, err
	}
	// Some rows were there already: read what is stored under every key of
	// the batch (the rows inserted just now compare equal to themselves).
	// A plain read, no locks: a row the INSERT skipped was committed before
	// the INSERT went on, and on MySQL this SELECT is the transaction's
	// first consistent read, so its snapshot includes that row. (A locking
	// read here deadlocked concurrent imports of the same rows.)
	keys := make([]any, 0, len(rows)+1)
	keys = append(keys, ImportNode)
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		if !seen[r.key] {
			seen[r.key] = true
			keys = append(keys, r.key)
		}
	}
	q := "SELECT uuid, direction, caller_id_name, caller_id_number, destination, extension, started_at, answered_at, ended_at, duration_seconds, billsec, hangup_cause FROM cdrs WHERE node = ? AND uuid IN (?" +
		strings.Repeat(", ?", len(keys)-2) + ")"
	var stored []storedCDR
	if err := tx.SelectContext(ctx, &stored, q, keys...); err != nil {
		return 0, 0, nil, args, fmt.Errorf("read imported cdrs: %w", err)
	}
	byKey := make(map[string]storedCDR, len(stored))
	for _, s := range stored {
		byKey[s.Key] = s
	}
	for _, r := range rows {
		old, ok := byKey[r.key]
		if !ok {
			continue
		}
		if diff := old.differences(r); len(diff) > 0 {
			conflicts = append(conflicts, RowError{Row: r.row, ExternalID: r.externalID, Code: "conflict", Error: diff.conflict(r.externalID).Error()})
		}
	}
	return created, int64(len(rows)) - created - int64(len(conflicts)), conflicts, args, nil
}

// CDRSummary is the answer of a synchronous import of at most 1000 records.
type CDRSummary struct {
	Created    int64 `json:"created"`
	Duplicates int64 `json:"duplicates"`
	// Conflicts counts the records refused because their external_id was
	// imported before with other content (each is also in Failed, code
	// conflict).
	Conflicts int64      `json:"conflicts"`
	Failed    []RowError `json:"failed"`
}

// MaxSyncCDRs bounds a JSON {records: [...]} import.
const MaxSyncCDRs = 1000

// ImportCDRs stores a small batch at once: each record accepted or refused
// on its own (Row is the index in the request); a repeat with the same
// content counts as a duplicate, the same external_id with other content
// is refused with code conflict naming the fields that differ.
func (s *Service) ImportCDRs(ctx context.Context, o models.Owner, records []CDRRecord) (CDRSummary, error) {
	if len(records) == 0 || len(records) > MaxSyncCDRs {
		return CDRSummary{}, models.FieldError("records", "must hold 1 to %d records (send CSV or JSON Lines for more)", MaxSyncCDRs)
	}
	sum := CDRSummary{Failed: []RowError{}}
	rows := make([]cdrRow, 0, len(records))
	now := s.now()
	for i, r := range records {
		row, rerr := checkCDR(o.Tenant, r, now)
		if rerr != nil {
			rerr.Row = int64(i)
			sum.Failed = append(sum.Failed, *rerr)
			continue
		}
		row.row = int64(i)
		rows = append(rows, row)
	}
	var conflicts []RowError
	err := s.Store.InTx(ctx, func(tx models.Querier) (err error) {
		sum.Created, sum.Duplicates, conflicts, _, err = storeCDRs(ctx, tx, s.Store.Dialect(), rows, nil, nil)
		return err
	})
	if err != nil {
		return CDRSummary{}, err
	}
	sum.Conflicts = int64(len(conflicts))
	sum.Failed = append(sum.Failed, conflicts...)
	slices.SortStableFunc(sum.Failed, func(a, b RowError) int { return cmp.Compare(a.Row, b.Row) })
	return sum, nil
}
