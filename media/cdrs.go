package media

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/switchboard/switchboard/models"
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
	tenant, externalID, key                    string
	direction, callerName, src, dst, extension string
	started, ended                             string
	answered                                   *string
	duration, billsec                          int64
	hangupCause                                string
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
		duration: *r.Duration, billsec: billsec, hangupCause: cause,
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
func insertCDRs(ctx context.Context, tx *sqlx.Tx, d models.Dialect, rows []cdrRow, args []any, full *sql.Stmt) (int64, []any, error) {
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
		res, err = tx.StmtContext(ctx, full).ExecContext(ctx, args...)
	} else {
		res, err = tx.ExecContext(ctx, cdrInsertSQL(d, len(rows)), args...)
	}
	if err != nil {
		return 0, args, fmt.Errorf("insert imported cdrs: %w", d.Translate(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, args, fmt.Errorf("insert imported cdrs: %w", err)
	}
	return n, args, nil
}

// CDRSummary is the answer of a synchronous import of at most 1000 records.
type CDRSummary struct {
	Created    int64      `json:"created"`
	Duplicates int64      `json:"duplicates"`
	Failed     []RowError `json:"failed"`
}

// MaxSyncCDRs bounds a JSON {records: [...]} import.
const MaxSyncCDRs = 1000

// ImportCDRs stores a small batch at once: each record accepted or refused
// on its own (Row is the index in the request), repeats counted as duplicates.
func (s *Service) ImportCDRs(ctx context.Context, o models.Owner, records []CDRRecord) (CDRSummary, error) {
	if len(records) == 0 || len(records) > MaxSyncCDRs {
		return CDRSummary{}, models.FieldError("records", "must hold 1 to %d records (send CSV or JSON Lines for more)", MaxSyncCDRs)
	}
	sum := CDRSummary{Failed: []RowError{}}
	rows := make([]cdrRow, 0, len(records))
	seen := map[string]bool{}
	now := s.now()
	for i, r := range records {
		row, rerr := checkCDR(o.Tenant, r, now)
		if rerr != nil {
			rerr.Row = int64(i)
			sum.Failed = append(sum.Failed, *rerr)
			continue
		}
		if seen[row.key] {
			sum.Duplicates++
			continue
		}
		seen[row.key] = true
		rows = append(rows, row)
	}
	err := s.Store.InTx(ctx, func(tx *sqlx.Tx) error {
		n, _, err := insertCDRs(ctx, tx, s.Store.Dialect(), rows, nil, nil)
		sum.Created = n
		sum.Duplicates += int64(len(rows)) - n
		return err
	})
	return sum, err
}
