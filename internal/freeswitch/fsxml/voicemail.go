package fsxml

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
)

// voicemailConf answers voicemail.conf: the default profile plus one per
// distinct special-mailbox message length (dialplan.VoicemailProfileFor).
// Not cached: mod_voicemail fetches it at load and when a call first names
// a profile it has not loaded, and its answer spans every tenant.
func (s *Service) voicemailConf(ctx context.Context) ([]byte, error) {
	rows, err := s.st.Querier().QueryContext(ctx, `SELECT DISTINCT max_message_seconds FROM special_mailboxes`)
	if err != nil {
		return nil, fmt.Errorf("read mailbox limits: %w", err)
	}
	defer rows.Close()
	var lengths []int
	for rows.Next() {
		var n sql.NullInt64
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("read mailbox limits: %w", err)
		}
		lengths = append(lengths, int(n.Int64))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read mailbox limits: %w", err)
	}
	return dialplan.VoicemailConf(s.opts, lengths), nil
}
