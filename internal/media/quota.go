package media

import (
	"context"
	"fmt"
)

// usageQuery sums what a tenant stores: voice prompts, hold music,
// imported recordings and voicemail, and the uploads of its running import
// jobs (spooled until the job ends).
const usageQuery = `SELECT
	(SELECT COALESCE(SUM(size_bytes), 0) FROM voice_prompts WHERE tenant_id = ?) +
	(SELECT COALESCE(SUM(size_bytes), 0) FROM moh_files WHERE tenant_id = ?) +
	(SELECT COALESCE(SUM(size_bytes), 0) FROM recordings WHERE tenant_id = ?) +
	(SELECT COALESCE(SUM(size_bytes), 0) FROM voicemail_imports WHERE tenant_id = ?) +
	(SELECT COALESCE(SUM(source_bytes), 0) FROM import_jobs WHERE tenant_id = ? AND status = ?)`

// Usage is the bytes a tenant's stored media take (what its
// max_storage_mb bounds).
func (s *Service) Usage(ctx context.Context, tenantID int64) (int64, error) {
	var used int64
	if err := s.Store.Querier().GetContext(ctx, &used, usageQuery, tenantID, tenantID, tenantID, tenantID, tenantID, JobRunning); err != nil {
		return 0, fmt.Errorf("storage in use: %w", err)
	}
	return used, nil
}

// admitter is a Bounds.Admit for tenant: storing size more bytes must keep
// the tenant within its max_storage_mb (0: unlimited), else a LimitError
// wrapping ErrQuota. Concurrent uploads are each checked against what is
// stored when they finish converting, so together they can pass the
// quota by at most the files in flight.
func (s *Service) admitter(tenant string) func(ctx context.Context, size int64) error {
	return func(ctx context.Context, size int64) error {
		var t struct {
			ID    int64 `db:"id"`
			MaxMB int64 `db:"max_storage_mb"`
		}
		if err := s.Store.Querier().GetContext(ctx, &t, "SELECT id, COALESCE(max_storage_mb, 0) AS max_storage_mb FROM tenants WHERE tenant = ?", tenant); err != nil {
			return fmt.Errorf("storage quota of %s: %w", tenant, err)
		}
		if t.MaxMB <= 0 {
			return nil
		}
		used, err := s.Usage(ctx, t.ID)
		if err != nil {
			return err
		}
		if limit := t.MaxMB << 20; used+size > limit {
			return &LimitError{Err: ErrQuota, Msg: fmt.Sprintf("storing this file (%d bytes) would take the tenant over its storage quota of %d MB (%d bytes in use)", size, t.MaxMB, used)}
		}
		return nil
	}
}
