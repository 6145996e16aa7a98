package fsxml

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
)

// localStreamConf answers local_stream.conf from the database: the
// platform's default stream and every tenant's classes. It is not
// cached: mod_local_stream fetches it only at load and on a stream reload,
// and its answer spans every tenant.
func (s *Service) localStreamConf(ctx context.Context) ([]byte, error) {
	rows, err := s.st.Querier().QueryContext(ctx, `SELECT t.tenant, t.enabled, m.name, COALESCE(m.rate, 8000), m.shuffle, COALESCE(m.chime_frequency_seconds, 30), COALESCE(m.chime_max, 0), vp.filename
		FROM music_on_hold m JOIN tenants t ON t.id = m.tenant_id LEFT JOIN voice_prompts vp ON vp.id = m.chime_prompt_id
		ORDER BY t.tenant, m.name`)
	if err != nil {
		return nil, fmt.Errorf("read music on hold: %w", err)
	}
	defer rows.Close()
	var classes []dialplan.MOHClass
	for rows.Next() {
		var c dialplan.MOHClass
		var chime sql.NullString
		if err := rows.Scan(&c.Tenant, &c.TenantEnabled, &c.Name, &c.Rate, &c.Shuffle, &c.ChimeFrequency, &c.ChimeMax, &chime); err != nil {
			return nil, fmt.Errorf("read music on hold: %w", err)
		}
		c.ChimeFile = chime.String
		classes = append(classes, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read music on hold: %w", err)
	}
	return dialplan.LocalStreamConf(s.cfg.MediaDir, s.cfg.MOHDefaultDir, s.opts.Media, classes), nil
}
