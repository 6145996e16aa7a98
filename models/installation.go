package models

import (
	"context"
	"fmt"
)

// InstallationID is the id every replica on this database shares (table
// installation, written once by its migration). What replicas tell each
// other through Redis is namespaced by it, so installations that share a
// Redis server never hear each other.
func (s *Store) InstallationID(ctx context.Context) (string, error) {
	var id string
	if err := s.db.GetContext(ctx, &id, "SELECT installation_id FROM installation WHERE id = 1"); err != nil {
		return "", fmt.Errorf("installation id: %w", s.TranslateErr(err))
	}
	return id, nil
}
